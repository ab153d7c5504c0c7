package compat

import (
	"errors"

	"github.com/runedge/runedge/plugins/guestjson"
)

// responseEcho holds the echoed request settings as raw JSON, each with the
// API default in case the echo lacks it.
type responseEcho struct {
	instructions, metadata, temperature, topP, maxOutputTokens value
	text, toolChoice, tools, parallelToolCalls, store          value
	truncation, user, previousResponseID, background           value
	openFields
	// conversation is {"id"} of the conversation the response continues,
	// which the host adds to the echo (filters/run); absent otherwise.
	conversation value
}

func readResponseEcho(echo value) responseEcho {
	e := responseEcho{
		instructions: "null", metadata: "{}", temperature: "1", topP: "1",
		maxOutputTokens: "null", text: `{"format":{"type":"text"}}`, toolChoice: `"auto"`,
		tools: "[]", parallelToolCalls: "true", store: "true", truncation: `"disabled"`,
		user: "null", previousResponseID: "null", background: "false",
		openFields: openFields{presencePenalty: "0", frequencyPenalty: "0", topLogprobs: "0", maxToolCalls: "null",
			serviceTier: `"default"`, safetyIdentifier: "null", promptCacheKey: "null",
			reasoning: `{"effort":null,"summary":null}`},
	}
	echo.Members(func(k, v value) bool {
		switch {
		case k.Is("instructions"):
			e.instructions = v
		case k.Is("metadata"):
			e.metadata = v
		case k.Is("temperature"):
			e.temperature = v
		case k.Is("top_p"):
			e.topP = v
		case k.Is("max_output_tokens"):
			e.maxOutputTokens = v
		case k.Is("text"):
			e.text = v
		case k.Is("tool_choice"):
			e.toolChoice = v
		case k.Is("tools"):
			e.tools = v
		case k.Is("parallel_tool_calls"):
			e.parallelToolCalls = v
		case k.Is("store"):
			e.store = v
		case k.Is("truncation"):
			e.truncation = v
		case k.Is("user"):
			e.user = v
		case k.Is("previous_response_id"):
			e.previousResponseID = v
		case k.Is("background"):
			e.background = v
		case k.Is("conversation"):
			e.conversation = v
		default:
			e.openFields.collect(k, v)
		}
		return true
	})
	return e
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
	out = append(out, e.instructions...)
	out = append(out, `,"max_output_tokens":`...)
	out = append(out, e.maxOutputTokens...)
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
		out = r.appendFunctionCallItems(out, message, e.tools)
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
	out = append(out, `,"parallel_tool_calls":`...)
	out = append(out, e.parallelToolCalls...)
	out = append(out, `,"previous_response_id":`...)
	out = append(out, e.previousResponseID...)
	out = append(out, `,"reasoning":`...)
	out = append(out, e.reasoning...)
	out = append(out, `,"store":`...)
	out = append(out, e.store...)
	out = append(out, `,"temperature":`...)
	out = append(out, e.temperature...)
	out = append(out, `,"text":`...)
	out = append(out, e.text...)
	out = append(out, `,"tool_choice":`...)
	out = append(out, e.toolChoice...)
	out = append(out, `,"tools":`...)
	out = append(out, e.tools...)
	out = append(out, `,"top_p":`...)
	out = append(out, e.topP...)
	out = append(out, `,"truncation":`...)
	out = append(out, e.truncation...)
	out = append(out, `,"background":`...)
	out = append(out, e.background...)
	out = append(out, `,"presence_penalty":`...)
	out = append(out, e.presencePenalty...)
	out = append(out, `,"frequency_penalty":`...)
	out = append(out, e.frequencyPenalty...)
	out = append(out, `,"top_logprobs":`...)
	out = append(out, e.topLogprobs...)
	out = append(out, `,"max_tool_calls":`...)
	out = append(out, e.maxToolCalls...)
	out = append(out, `,"service_tier":`...)
	out = append(out, e.serviceTier...)
	out = append(out, `,"safety_identifier":`...)
	out = append(out, e.safetyIdentifier...)
	out = append(out, `,"prompt_cache_key":`...)
	out = append(out, e.promptCacheKey...)
	if e.conversation.IsObject() {
		out = append(out, `,"conversation":`...)
		out = guestjson.AppendCompact(out, string(e.conversation))
	}
	out = append(out, `,"usage":`...)
	if !hasOutput {
		out = append(out, `null`...)
	} else {
		out = appendResponseUsage(out, r.readUsage())
	}
	out = append(out, `,"user":`...)
	out = append(out, e.user...)
	out = append(out, `,"metadata":`...)
	out = r.appendMetadata(out, e.metadata)
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
