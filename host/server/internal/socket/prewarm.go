package socket

import (
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/internal/respjson"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/native"
)

// A pre-warm (response.create with generate: false) prepares state for the
// next turn without generating: the Responses API answers it with a
// Response that has no output, whose id a later turn passes as
// previous_response_id. No model is called, so no run is made: the
// pre-warm is the socket's own and lives in its cache (Cache) only.

// prewarm returns the response.created and response.completed events of a
// pre-warm of body (the client's create body, before expansion): a
// Response with every key the Open Responses description requires
// (respjson writes it), echoing the request's settings, with no output and
// a usage of zero.
func prewarm(body []byte, model string) (created, completed []byte) {
	id := runner.NewID(contract.ResponsePrefix)
	now := time.Now().Unix()
	r := respjson.Response{ID: id, Model: model, CreatedAt: now}
	for i, f := range contract.ResponseEcho {
		if i == contract.EchoBackground || i == contract.EchoMetadata {
			continue // never in the background; metadata is written apart
		}
		if v := gjson.GetBytes(body, f.Name); v.Exists() {
			r.Echo[i] = v.Raw
		}
	}
	meta := gjson.GetBytes(body, "metadata")
	resp := func(status string) []byte {
		r.Status, r.CompletedAt = status, 0
		var usage *native.Usage
		if status == respjson.StatusCompleted {
			r.CompletedAt, usage = now, &native.Usage{}
		}
		b := respjson.AppendResponseHead(make([]byte, 0, 1024), &r)
		b = respjson.AppendResponseTail(b, &r, `""`, usage)
		if meta.IsObject() {
			b = append(b, meta.Raw...)
		} else {
			b = append(b, "{}"...)
		}
		return append(b, respjson.ResponseEnd...)
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
