package runner

import (
	"encoding/json"
	"strconv"

	"github.com/runedge/runedge/internal/jsonfast"
)

// recordedJSON is the request as a run keeps it (Run.Request): json.Marshal
// of r. Every run pays it before its agent starts: encoding/json took
// 1.0 µs for a two-message chat request in a loop (BenchmarkRecordedJSON)
// and 2–4 µs per stream in BenchmarkStream20's profile. A request of the
// common shape (messages of a role and text, none of the settings
// appendPlainRequest refuses) is written by hand instead (0.16 µs), byte
// for byte as json.Marshal writes it (TestRecordedJSONMatchesMarshal); any
// other goes to json.Marshal, given a copy: r itself then does not escape,
// so the caller's Request (300 bytes) stays on its stack on the common path.
func recordedJSON(r *Request) ([]byte, error) {
	if b, ok := appendPlainRequest(r); ok {
		return b, nil
	}
	c := *r
	return json.Marshal(&c)
}

// appendPlainRequest writes r in json.Marshal's form, or reports false
// when r has a field it does not write.
func appendPlainRequest(r *Request) ([]byte, bool) {
	if len(r.OutputSchema) > 0 || r.SchemaName != "" || r.JSONObject || len(r.Tools) > 0 || !r.ToolChoice.IsZero() ||
		r.ParallelToolCalls != nil || r.MaxToolCalls != 0 || r.Upstream != (Upstream{}) || len(r.WithheldTools) > 0 {
		return nil, false
	}
	n := 32 + len(r.Instructions) + len(r.PreviousResponseID)
	for i := range r.Input {
		m := &r.Input[i]
		if m.Ref != "" || m.RefIndex != 0 || len(m.ToolCalls) > 0 || m.ToolCallID != "" || len(m.Parts) > 0 ||
			m.Phase != "" || m.Reasoning != nil {
			return nil, false
		}
		n += 24 + len(m.Role) + len(m.Content) + len(m.Content)/8 // escapes
	}
	b := make([]byte, 0, n)
	b = append(b, `{"input":`...)
	if r.Input == nil { // store:false records no input
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Input {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"role":`...)
			b = jsonfast.AppendString(b, r.Input[i].Role)
			b = append(b, `,"content":`...)
			b = jsonfast.AppendString(b, r.Input[i].Content)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if r.Instructions != "" {
		b = append(b, `,"instructions":`...)
		b = jsonfast.AppendString(b, r.Instructions)
	}
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, r.Stream)
	if r.MaxOutputTokens != 0 {
		b = append(b, `,"max_output_tokens":`...)
		b = strconv.AppendInt(b, int64(r.MaxOutputTokens), 10)
	}
	if r.PreviousResponseID != "" {
		b = append(b, `,"previous_response_id":`...)
		b = jsonfast.AppendString(b, r.PreviousResponseID)
	}
	if r.NoStore {
		b = append(b, `,"no_store":true`...)
	}
	if r.Background {
		b = append(b, `,"background":true`...)
	}
	return append(b, '}'), true
}
