package compat

import "errors"

// responseEcho holds the echoed request settings as raw JSON, each with the
// API default in case the echo lacks it.
type responseEcho struct {
	instructions, metadata, temperature, topP, maxOutputTokens value
	text, toolChoice, tools, parallelToolCalls, store          value
	truncation, user, previousResponseID, background           value
}

func readResponseEcho(echo value) responseEcho {
	e := responseEcho{
		instructions: "null", metadata: "{}", temperature: "1", topP: "1",
		maxOutputTokens: "null", text: `{"format":{"type":"text"}}`, toolChoice: `"auto"`,
		tools: "[]", parallelToolCalls: "true", store: "true", truncation: `"disabled"`,
		user: "null", previousResponseID: "null", background: "false",
	}
	echo.members(func(k, v value) bool {
		switch {
		case k.is("instructions"):
			e.instructions = v
		case k.is("metadata"):
			e.metadata = v
		case k.is("temperature"):
			e.temperature = v
		case k.is("top_p"):
			e.topP = v
		case k.is("max_output_tokens"):
			e.maxOutputTokens = v
		case k.is("text"):
			e.text = v
		case k.is("tool_choice"):
			e.toolChoice = v
		case k.is("tools"):
			e.tools = v
		case k.is("parallel_tool_calls"):
			e.parallelToolCalls = v
		case k.is("store"):
			e.store = v
		case k.is("truncation"):
			e.truncation = v
		case k.is("user"):
			e.user = v
		case k.is("previous_response_id"):
			e.previousResponseID = v
		case k.is("background"):
			e.background = v
		}
		return true
	})
	return e
}

// mapResponsesResult builds a Response object with every key the Responses
// schema marks required. A run cut short by the token limit is reported as
// OpenAI does: status "incomplete" with reason max_output_tokens.
func mapResponsesResult(r *resultInput) ([]byte, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	var status string
	switch {
	case r.status.is("in_progress"), r.status.is("queued"), r.status.is("cancelled"), r.status.is("failed"):
		// A response without output: still running, or ended without one
		// (the host rebuilds these from the run when it is read back).
		status = r.status.str()
	case r.status.is("completed"):
		status = "completed"
		if r.finish().is("length") {
			status = "incomplete"
		}
		if !r.messageID.isString() || r.messageID == `""` {
			return nil, errors.New("compat: a completed result needs a message_id")
		}
	default:
		return nil, errors.New(`compat: result status must be "completed" or "in_progress"`)
	}
	e := readResponseEcho(r.echo)

	out := make([]byte, 0, len(r.echo)+len(r.text)+len(r.toolCalls)*2+len(r.id)+len(r.messageID)+len(r.model)+640)
	out = append(out, `{"id":`...)
	out = appendString(out, r.id)
	out = append(out, `,"object":"response","created_at":`...)
	out = r.appendCreated(out)
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
	out = appendString(out, r.model)
	out = append(out, `,"output":[`...)
	hasOutput := status == "completed" || status == "incomplete"
	if hasOutput {
		// A message when the model said something (or called nothing),
		// then its function calls.
		message := !r.hasCalls() || (r.text.isString() && r.text != `""`)
		if message {
			out = append(out, outputItemHead...)
			out = appendString(out, r.messageID)
			if status == "incomplete" {
				out = append(out, outputItemIncomplete...)
			} else {
				out = append(out, outputItemCompleted...)
			}
			out = r.appendText(out)
			out = append(out, outputTextTail...)
		}
		out = r.appendFunctionCallItems(out, message)
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
	out = append(out, `,"reasoning":{"effort":null,"summary":null},"store":`...)
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
	dst = appendString(dst, r.sessionID)
	dst = append(dst, `,"run_id":`...)
	dst = appendString(dst, r.runID)
	dst = append(dst, '}')
	metadata.members(func(k, v value) bool {
		if !k.is("service") {
			dst = append(dst, ',')
			dst = append(dst, k...)
			dst = append(dst, ':')
			dst = appendCompact(dst, string(v))
		}
		return true
	})
	return append(dst, '}')
}
