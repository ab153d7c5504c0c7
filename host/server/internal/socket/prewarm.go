package socket

import (
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// A pre-warm (response.create with generate: false) prepares state for the
// next turn without generating: the Responses API answers it with a
// Response that has no output, whose id a later turn passes as
// previous_response_id. No model is called, so no run is made: the
// pre-warm is the socket's own and lives in its cache (Cache) only.

// echoed are the Response fields a pre-warm echoes from its request
// (contract.ResponseEcho gives each its name and the value when the request
// has none); background and metadata are written apart.
var echoed = [...]int{
	contract.EchoInstructions, contract.EchoMaxOutputTokens, contract.EchoParallelToolCalls,
	contract.EchoPreviousResponseID, contract.EchoReasoning, contract.EchoStore, contract.EchoTemperature,
	contract.EchoText, contract.EchoToolChoice, contract.EchoTools, contract.EchoTopP, contract.EchoTruncation,
	contract.EchoUser,
}

// prewarm returns the response.created and response.completed events of a
// pre-warm of body (the client's create body, before expansion).
func prewarm(body []byte, model string) (created, completed []byte) {
	id := runner.NewID(contract.ResponsePrefix)
	now := time.Now().Unix()
	resp := func(status string) []byte {
		b := make([]byte, 0, 512)
		b = append(b, `{"id":`...)
		b = strconv.AppendQuote(b, id)
		b = append(b, `,"object":"response","created_at":`...)
		b = strconv.AppendInt(b, now, 10)
		b = append(b, `,"status":`...)
		b = strconv.AppendQuote(b, status)
		b = append(b, `,"error":null,"incomplete_details":null,"model":`...)
		b = strconv.AppendQuote(b, model)
		b = append(b, `,"output":[],"output_text":""`...)
		for _, i := range echoed {
			f := contract.ResponseEcho[i]
			b = append(b, ',', '"')
			b = append(b, f.Name...)
			b = append(b, '"', ':')
			if v := gjson.GetBytes(body, f.Name); v.Exists() {
				b = append(b, v.Raw...)
			} else {
				b = append(b, f.Default...)
			}
		}
		b = append(b, `,"background":false,"usage":{"input_tokens":0,"input_tokens_details":{"cached_tokens":0,"cache_write_tokens":0},"output_tokens":0,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":0}`...)
		meta := gjson.GetBytes(body, "metadata")
		b = append(b, `,"metadata":`...)
		if meta.IsObject() {
			b = append(b, meta.Raw...)
		} else {
			b = append(b, "{}"...)
		}
		return append(b, '}')
	}
	event := func(typ string, seq int, r []byte) []byte {
		b := make([]byte, 0, len(r)+80)
		b = append(b, `{"type":`...)
		b = strconv.AppendQuote(b, typ)
		b = append(b, `,"sequence_number":`...)
		b = strconv.AppendInt(b, int64(seq), 10)
		b = append(b, `,"response":`...)
		b = append(b, r...)
		return append(b, '}')
	}
	return event("response.created", 0, resp("in_progress")), event("response.completed", 1, resp("completed"))
}
