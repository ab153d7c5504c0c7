package compat

import "github.com/runedge/runedge/plugins/abi"

// mapChatResult builds the chat.completion reply. It leaves out what the
// schema marks optional and runedge cannot fill (system_fingerprint,
// service_tier) and never writes a top-level "error".
func mapChatResult(r *resultInput) ([]byte, error) {
	out := make([]byte, 0, len(r.Text)+len(r.ID)+len(r.Model)+480)
	out = append(out, `{"id":`...)
	out = appendString(out, r.ID)
	out = append(out, `,"object":"chat.completion","created":`...)
	out = r.appendCreated(out)
	out = append(out, `,"model":`...)
	out = appendString(out, r.Model)
	out = append(out, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	if r.hasCalls() && (!r.Text.IsString() || r.Text == `""`) {
		out = append(out, `null`...) // as OpenAI answers a message that only calls tools
	} else {
		out = r.appendText(out)
	}
	out = append(out, `,"refusal":null,"annotations":[]`...)
	if r.hasCalls() {
		out = r.appendChatToolCalls(out)
	}
	out = append(out, `},"logprobs":null,"finish_reason":`...)
	out = appendString(out, r.finish())
	out = append(out, `}],"usage":`...)
	u := r.readUsage()
	out = abi.AppendChatUsage(out, u)
	return append(out, '}'), nil
}
