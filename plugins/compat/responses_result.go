package compat

import (
	"errors"

	"github.com/tidwall/gjson"
)

// responseEcho holds the echoed request settings as raw JSON, each with the
// API default in case the echo lacks it.
type responseEcho struct {
	instructions, metadata, temperature, topP, maxOutputTokens string
	text, toolChoice, tools, parallelToolCalls, store          string
	truncation, user, previousResponseID                       string
}

func readResponseEcho(echo gjson.Result) responseEcho {
	e := responseEcho{
		instructions: "null", metadata: "{}", temperature: "1", topP: "1",
		maxOutputTokens: "null", text: `{"format":{"type":"text"}}`, toolChoice: `"auto"`,
		tools: "[]", parallelToolCalls: "true", store: "true", truncation: `"disabled"`,
		user: "null", previousResponseID: "null",
	}
	echo.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "instructions":
			e.instructions = v.Raw
		case "metadata":
			e.metadata = v.Raw
		case "temperature":
			e.temperature = v.Raw
		case "top_p":
			e.topP = v.Raw
		case "max_output_tokens":
			e.maxOutputTokens = v.Raw
		case "text":
			e.text = v.Raw
		case "tool_choice":
			e.toolChoice = v.Raw
		case "tools":
			e.tools = v.Raw
		case "parallel_tool_calls":
			e.parallelToolCalls = v.Raw
		case "store":
			e.store = v.Raw
		case "truncation":
			e.truncation = v.Raw
		case "user":
			e.user = v.Raw
		case "previous_response_id":
			e.previousResponseID = v.Raw
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
	switch r.status.Str {
	case "in_progress":
		status = "in_progress"
	case "completed":
		status = "completed"
		if r.finish() == "length" {
			status = "incomplete"
		}
		if r.messageID.Type != gjson.String || r.messageID.Str == "" {
			return nil, errors.New("compat: a completed result needs a message_id")
		}
	default:
		return nil, errors.New(`compat: result status must be "completed" or "in_progress"`)
	}
	e := readResponseEcho(r.echo)

	out := make([]byte, 0, len(r.echo.Raw)+len(r.text.Raw)+len(r.id.Raw)+len(r.messageID.Raw)+len(r.model.Raw)+640)
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
	if status != "in_progress" {
		out = append(out, outputItemHead...)
		out = appendString(out, r.messageID)
		out = append(out, outputItemCompleted...)
		out = r.appendText(out)
		out = append(out, outputTextTail...)
	}
	out = append(out, `],"parallel_tool_calls":`...)
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
	out = append(out, `,"usage":`...)
	if status == "in_progress" {
		out = append(out, `null`...)
	} else {
		out = appendResponseUsage(out, usageFrom(r.usage))
	}
	out = append(out, `,"user":`...)
	out = append(out, e.user...)
	out = append(out, `,"metadata":`...)
	out = append(out, e.metadata...)
	// access_programs is required by the current schema; null means no
	// special access program applied, which is always true here.
	return append(out, `,"access_programs":null}`...), nil
}
