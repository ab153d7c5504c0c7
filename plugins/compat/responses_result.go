package compat

import (
	"errors"

	"github.com/runedge/runedge/internal/contract"
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

// responseEchoOrder is the order in which the Response object shows the
// echoed settings after output_text (instructions, max_output_tokens and
// metadata have places of their own).
var responseEchoOrder = [...]int{
	contract.EchoParallelToolCalls, contract.EchoPreviousResponseID, contract.EchoReasoning,
	contract.EchoStore, contract.EchoTemperature, contract.EchoText, contract.EchoToolChoice,
	contract.EchoTools, contract.EchoTopP, contract.EchoTruncation, contract.EchoBackground,
	contract.EchoPresencePenalty, contract.EchoFrequencyPenalty, contract.EchoTopLogprobs,
	contract.EchoMaxToolCalls, contract.EchoServiceTier, contract.EchoSafetyIdentifier,
	contract.EchoPromptCacheKey,
}

// mapResponsesResult builds a Response object with every key the Responses
// schema marks required. A run cut short by the token limit is reported as
// OpenAI does: status "incomplete" with reason max_output_tokens.
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

	out := make([]byte, 0, len(r.Echo)+len(r.Text)+len(r.ToolCalls)*2+len(r.ID)+len(r.MessageID)+len(r.Model)+896)
	out = append(out, `{"id":`...)
	out = appendString(out, r.ID)
	out = append(out, `,"object":"response","created_at":`...)
	out = r.appendCreated(out)
	out = append(out, `,"completed_at":`...)
	if status == "completed" || status == "incomplete" {
		out = r.appendCompleted(out)
	} else {
		out = append(out, `null`...)
	}
	out = append(out, `,"status":"`...)
	out = append(out, status...)
	out = append(out, `","error":null,"incomplete_details":`...)
	if status == "incomplete" {
		out = append(out, `{"reason":"max_output_tokens"}`...)
	} else {
		out = append(out, `null`...)
	}
	out = append(out, `,"instructions":`...)
	out = append(out, e.v[contract.EchoInstructions]...)
	out = append(out, `,"max_output_tokens":`...)
	out = append(out, e.v[contract.EchoMaxOutputTokens]...)
	out = append(out, `,"model":`...)
	out = appendString(out, r.Model)
	out = append(out, `,"output":[`...)
	hasOutput := status == "completed" || status == "incomplete"
	if hasOutput {
		// A message when the model said something (or called nothing),
		// then its function calls.
		message := !r.hasCalls() || (r.Text.IsString() && r.Text != `""`)
		if message {
			out = append(out, outputItemHead...)
			out = appendString(out, r.MessageID)
			if status == "incomplete" {
				out = append(out, outputItemIncomplete...)
			} else {
				out = append(out, outputItemCompleted...)
			}
			out = r.appendText(out)
			out = append(out, outputTextTail...)
		}
		out = r.appendFunctionCallItems(out, message, e.v[contract.EchoTools])
		out = r.appendReasoningItem(out, message || r.hasCalls())
	}
	// output_text is the text of the message items, which clients that
	// read the wire (and the service's contract) rely on.
	out = append(out, `],"output_text":`...)
	if hasOutput {
		out = r.appendText(out)
	} else {
		out = append(out, `""`...)
	}
	for _, i := range responseEchoOrder {
		out = appendEchoKey(out, i)
		out = append(out, e.v[i]...)
	}
	if e.conversation.IsObject() {
		out = append(out, `,"`+contract.EchoConversation+`":`...)
		out = guestjson.AppendCompact(out, string(e.conversation))
	}
	out = append(out, `,"usage":`...)
	if !hasOutput {
		out = append(out, `null`...)
	} else {
		out = appendResponseUsage(out, r.readUsage())
	}
	out = append(out, `,"user":`...)
	out = append(out, e.v[contract.EchoUser]...)
	out = append(out, `,"metadata":`...)
	out = r.appendMetadata(out, e.v[contract.EchoMetadata])
	// access_programs is required by the current schema; null means no
	// special access program applied, which is always true here.
	return append(out, `,"access_programs":null}`...), nil
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
