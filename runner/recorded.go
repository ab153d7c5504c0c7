package runner

import (
	"encoding/json"
	"strconv"
	"sync"
	"unsafe"

	"github.com/runedge/runedge/internal/jsonfast"
)

// SharedRequestMin is the least size of a recorded request whose input
// messages' ends Start records (Run.RequestBounds), so that a store may
// keep it by reference to an earlier run's that begins the same way. A
// smaller request pays neither the bounds nor the store's lookup.
const SharedRequestMin = 16 << 10

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
	b, _, err := recordedWithBounds(r, false)
	return b, err
}

// recordedWithBounds is recordedJSON that also returns, when bounds is
// set and the request is of SharedRequestMin bytes at least, where each
// input message ends in it (Run.RequestBounds): written by hand, as it
// writes them; from json.Marshal, found by walking its input array.
func recordedWithBounds(r *Request, bounds bool) ([]byte, []int, error) {
	return recordedInto(r, bounds, false)
}

// recordedPooled is recordedWithBounds whose request, when it is of
// SharedRequestMin bytes or more, is written into a buffer from
// recordedPool; the caller gives it back (putRecorded) once nothing reads
// it.
func recordedPooled(r *Request, bounds bool) ([]byte, []int, error) {
	return recordedInto(r, bounds, true)
}

func recordedInto(r *Request, bounds, pooled bool) ([]byte, []int, error) {
	if b, ends, ok := appendPlainRequest(r, bounds, pooled); ok {
		return b, ends, nil
	}
	c := *r
	if hasPending(c.Input) {
		// encoding/json writes Content as it is: a pending text's escaped
		// bytes would be escaped again. Decoded in a copy: r's messages
		// are the agent's too.
		c.Input = append([]Message(nil), c.Input...)
		DecodeTexts(c.Input)
	}
	b, err := json.Marshal(&c)
	if err != nil || !bounds || len(b) < SharedRequestMin || len(c.Input) == 0 {
		return b, nil, err
	}
	const open = len(`{"input":`)
	// b is not written while it is walked.
	arr := unsafe.String(unsafe.SliceData(b[open:]), len(b)-open)
	return b, jsonfast.AppendEnds(make([]int, 0, len(c.Input)), arr, open), nil
}

// appendPlainRequest writes r in json.Marshal's form, or reports false
// when r has a field it does not write. With bounds, a request of
// SharedRequestMin bytes or more also gets its messages' ends; pooled,
// such a request is written into a buffer from recordedPool.
func appendPlainRequest(r *Request, bounds, pooled bool) ([]byte, []int, bool) {
	if len(r.OutputSchema) > 0 || r.SchemaName != "" || r.JSONObject || len(r.Tools) > 0 || !r.ToolChoice.IsZero() ||
		r.ParallelToolCalls != nil || r.MaxToolCalls != 0 || r.Upstream != (Upstream{}) || len(r.WithheldTools) > 0 {
		return nil, nil, false
	}
	n := 32 + len(r.Instructions) + len(r.PreviousResponseID)
	for i := range r.Input {
		m := &r.Input[i]
		if m.Ref != "" || m.RefIndex != 0 || len(m.ToolCalls) > 0 || m.ToolCallID != "" || len(m.Parts) > 0 ||
			m.Phase != "" || m.Reasoning != nil {
			return nil, nil, false
		}
		n += 24 + len(m.Role) + len(m.Content) + len(m.Content)/8 // escapes
	}
	var b []byte
	if pooled && n >= SharedRequestMin {
		b = recordedBuf()
	}
	if cap(b) < n {
		b = make([]byte, 0, n)
	}
	var ends []int
	if bounds && n >= SharedRequestMin && len(r.Input) > 0 {
		ends = make([]int, 0, len(r.Input))
	}
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
			if lit, ok := r.Input[i].ContentMarshaled(); ok {
				b = append(b, lit...) // the same bytes, without escaping them again
			} else {
				b = jsonfast.AppendString(b, textOf(&r.Input[i]))
			}
			b = append(b, '}')
			if ends != nil {
				ends = append(ends, len(b))
			}
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
	b = append(b, '}')
	if len(b) < SharedRequestMin {
		ends = nil
	}
	return b, ends, true
}

// recordedPool holds the buffers of recorded requests of
// SharedRequestMin bytes or more that Start gave back: a run's recorded
// request is read by the store's start write and let go of once that
// write committed (groupcommit.Writer.Do returns only then; both drivers
// copy what they bind), so an agent-sized request's 240 KB is written
// into the buffer of a request before it rather than allocated and
// zeroed each turn. RATIONALE.md "Agent-sized bodies".
var recordedPool sync.Pool // *[]byte

// recordedBuf returns a pooled buffer, or nil.
func recordedBuf() []byte {
	if p, ok := recordedPool.Get().(*[]byte); ok {
		return (*p)[:0]
	}
	return nil
}

// putRecorded gives b back for a later request; nothing may hold b.
func putRecorded(b []byte) {
	if cap(b) < SharedRequestMin || cap(b) > maxPooledRecorded {
		return
	}
	b = b[:0]
	recordedPool.Put(&b)
}

// maxPooledRecorded bounds a pooled buffer: a larger request's is let go.
const maxPooledRecorded = 4 << 20
