package compat

import (
	"errors"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/internal/respjson"
	"github.com/runedge/runedge/plugins/guestjson"
)

// responseEcho holds the echoed request settings as raw JSON, indexed as
// contract.ResponseEcho lists them, each with the API default in case the
// echo lacks it.
type responseEcho struct {
	v responsesEcho
	// conversation is {"id"} of the conversation the response continues,
	// which the host adds to the echo (filters/run); absent otherwise.
	conversation value
}

func readResponseEcho(echo value) responseEcho {
	var e responseEcho
	for i := range contract.ResponseEcho {
		e.v[i] = value(contract.ResponseEcho[i].Default)
	}
	echo.Members(func(k, v value) bool {
		if i := echoIndex(k); i >= 0 {
			e.v[i] = v
		} else if k.Is(contract.EchoConversation) {
			e.conversation = v
		}
		return true
	})
	return e
}

// mapResponsesResult builds a Response object with every key the Responses
// schema marks required (internal/respjson writes it). A run cut short by
// the token limit is reported as OpenAI does: status "incomplete" with
// reason max_output_tokens.
func mapResponsesResult(r *resultInput) ([]byte, error) {
	var status string
	switch {
	case r.Status.Is("in_progress"), r.Status.Is("queued"), r.Status.Is("cancelled"), r.Status.Is("failed"):
		// A response without output: still running, or ended without one
		// (the host rebuilds these from the run when it is read back).
		status = r.Status.Str()
	case r.Status.Is("completed"):
		status = "completed"
		if r.finish().Is("length") {
			status = "incomplete"
		}
		if !r.MessageID.IsString() || r.MessageID == `""` {
			return nil, errors.New("compat: a completed result needs a message_id")
		}
	default:
		return nil, errors.New(`compat: result status must be "completed" or "in_progress"`)
	}
	e := readResponseEcho(r.Echo)
	hasOutput := status == "completed" || status == "incomplete"
	head := respjson.Response{ID: r.ID.Str(), Model: r.Model.Str(), Status: status}
	if f, ok := r.Created.Num(); ok {
		head.CreatedAt = int64(f)
	}
	if hasOutput {
		head.CompletedAt = head.CreatedAt
		if f, ok := r.Completed.Num(); ok && f > 0 {
			head.CompletedAt = int64(f)
		}
	}
	if status == "incomplete" {
		head.IncompleteReason = "max_output_tokens"
	}
	for i, v := range e.v {
		head.Echo[i] = string(v)
	}
	if e.conversation.IsObject() {
		head.Conversation = string(guestjson.AppendCompact(nil, string(e.conversation)))
	}

	out := make([]byte, 0, len(r.Echo)+len(r.Text)+len(r.ToolCalls)*2+len(r.ID)+len(r.MessageID)+len(r.Model)+896)
	out = respjson.AppendResponseHead(out, &head)
	if hasOutput {
		// A message when the model said something (or called nothing),
		// then its function calls.
		message := !r.hasCalls() || (r.Text.IsString() && r.Text != `""`)
		if message {
			out = append(out, respjson.ItemHead...)
			out = appendString(out, r.MessageID)
			if status == "incomplete" {
				out = append(out, respjson.MessageIncomplete...)
			} else {
				out = append(out, respjson.MessageCompleted...)
			}
			out = r.appendText(out)
			out = append(out, respjson.MessageTail...)
		}
		out = r.appendFunctionCallItems(out, message, e.v[contract.EchoTools])
		out = r.appendReasoningItem(out, message || r.hasCalls())
	}
	// output_text is the text of the message items, which clients that
	// read the wire (and the service's contract) rely on.
	text := `""`
	if hasOutput {
		text = textValue(r.Text)
	}
	var usage *Usage
	if hasOutput {
		u := r.readUsage()
		usage = &u
	}
	out = respjson.AppendResponseTail(out, &head, text, usage)
	out = r.appendMetadata(out, e.v[contract.EchoMetadata])
	return append(out, respjson.ResponseEnd...), nil
}

// appendMetadata appends the caller's metadata with the service's own key,
// service = {"session_id","run_id"}, first: the contract puts the run
// headers there, and a caller's key of the same name cannot replace it.
func (r *resultInput) appendMetadata(dst []byte, metadata value) []byte {
	dst = append(dst, `{"service":{"session_id":`...)
	dst = appendString(dst, r.SessionID)
	dst = append(dst, `,"run_id":`...)
	dst = appendString(dst, r.RunID)
	dst = append(dst, '}')
	metadata.Members(func(k, v value) bool {
		if !k.Is("service") {
			dst = append(dst, ',')
			dst = append(dst, k...)
			dst = append(dst, ':')
			dst = guestjson.AppendCompact(dst, string(v))
		}
		return true
	})
	return append(dst, '}')
}

// textValue is text as a JSON string: as written when it can be copied
// (nearly always, and without allocating), else escaped afresh; "" when
// it is not a string.
func textValue(text value) string {
	if text.IsString() && guestjson.Copyable(text.Escaped()) {
		return string(text)
	}
	return string(appendString(nil, text))
}
