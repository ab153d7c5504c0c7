package compat

import (
	"math"
	"strconv"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/plugins/guestjson"
)

// The Responses fields the Open Responses specification added to the
// Response object. Each is honoured, passed on, or refused by name
// (docs/api.md "Responses"):
//
//   - reasoning.effort, prompt_cache_key, safety_identifier, service_tier
//     and user go to the provider ("upstream" in the native request), which
//     passes them to an upstream that takes them, and are echoed;
//   - max_tool_calls bounds the calls in the response (the agent keeps the
//     first max_tool_calls; 0 offers no tool);
//   - presence_penalty and frequency_penalty are sampling hints: checked,
//     echoed, not applied (as on chat);
//   - top_logprobs above 0 and truncation "auto" are refused
//     (responses_request.go), as runedge cannot do what they ask;
//   - context_management passes to the host's compaction stage, which
//     checks and honours it (filters/compaction).

// checkFields refuses values of the wrong type or out of OpenAI's range.
func (e *responsesEcho) checkFields() error {
	if err := optNumberIn(e[contract.EchoPresencePenalty], "presence_penalty", -2, 2); err != nil {
		return err
	}
	if err := optNumberIn(e[contract.EchoFrequencyPenalty], "frequency_penalty", -2, 2); err != nil {
		return err
	}
	if !e[contract.EchoTopLogprobs].IsNull() {
		if f, ok := e[contract.EchoTopLogprobs].Num(); !ok || f < 0 || f > 20 || f != math.Trunc(f) {
			return invalid("top_logprobs", "top_logprobs must be a whole number from 0 to 20")
		}
	}
	if !e[contract.EchoMaxToolCalls].IsNull() {
		if f, ok := e[contract.EchoMaxToolCalls].Num(); !ok || f < 0 || f > math.MaxInt32 || f != math.Trunc(f) {
			return invalid("max_tool_calls", "max_tool_calls must be a whole number of at least 0")
		}
	}
	for _, f := range [...]struct {
		v    value
		name string
	}{{e[contract.EchoServiceTier], "service_tier"}, {e[contract.EchoSafetyIdentifier], "safety_identifier"}, {e[contract.EchoPromptCacheKey], "prompt_cache_key"}} {
		if !f.v.IsNull() && !f.v.IsString() {
			return invalid(f.name, f.name+" must be a string")
		}
	}
	return checkReasoning(e[contract.EchoReasoning])
}

// checkReasoning checks the reasoning object's effort and summary against
// the values the API documents.
func checkReasoning(r value) error {
	if r.IsNull() {
		return nil
	}
	if !r.IsObject() {
		return invalid("reasoning", "reasoning must be an object")
	}
	effort, summary := r.Get("effort"), r.Get("summary")
	switch {
	case effort.IsNull(), effort.Is("none"), effort.Is("minimal"), effort.Is("low"), effort.Is("medium"),
		effort.Is("high"), effort.Is("xhigh"):
	default:
		return invalid("reasoning.effort", "reasoning.effort must be one of none, minimal, low, medium, high or xhigh")
	}
	switch {
	case summary.IsNull(), summary.Is("auto"), summary.Is("concise"), summary.Is("detailed"):
	default:
		return invalid("reasoning.summary", "reasoning.summary must be one of auto, concise or detailed")
	}
	return nil
}

// readFields fills the native request's share of these fields: the
// upstream settings and the tool-call bound. A bound of 0 lets the model
// call nothing, which is tool_choice none; with tool_choice required or a
// named function the request contradicts itself and is refused.
func (e *responsesEcho) readFields(n *native) error {
	n.upstream = upstreamOptions{effort: e[contract.EchoReasoning].Get("effort"), promptCacheKey: e[contract.EchoPromptCacheKey],
		safetyIdentifier: e[contract.EchoSafetyIdentifier], serviceTier: e[contract.EchoServiceTier], user: e[contract.EchoUser]}
	if e[contract.EchoMaxToolCalls].IsNull() {
		return nil
	}
	f, _ := e[contract.EchoMaxToolCalls].Num() // checked
	if f > 0 {
		n.maxToolCalls = int64(f)
		return nil
	}
	switch {
	case n.tools.tools == nil, n.tools.choice == "", n.tools.choice == `"none"`:
		if n.tools.tools != nil {
			n.tools.choice = `"none"`
		}
		return nil
	}
	return invalid("max_tool_calls", "max_tool_calls 0 allows no tool call, but tool_choice requires one")
}

// appendFields appends the echo of the fields the client set; MapResult
// fills in the defaults of the rest (readResponseEcho).
func (e *responsesEcho) appendFields(dst []byte) []byte {
	for _, i := range [...]int{contract.EchoPresencePenalty, contract.EchoFrequencyPenalty, contract.EchoTopLogprobs,
		contract.EchoMaxToolCalls, contract.EchoServiceTier, contract.EchoSafetyIdentifier, contract.EchoPromptCacheKey} {
		if !e[i].IsNull() {
			dst = appendEchoKey(dst, i)
			dst = guestjson.AppendCompact(dst, string(e[i]))
		}
	}
	if e[contract.EchoReasoning].IsObject() {
		dst = appendEchoKey(dst, contract.EchoReasoning)
		dst = append(dst, `{"effort":`...)
		dst = appendOptString(dst, e[contract.EchoReasoning].Get("effort"))
		dst = append(dst, `,"summary":`...)
		dst = appendOptString(dst, e[contract.EchoReasoning].Get("summary"))
		dst = append(dst, '}')
	}
	return dst
}

// upstreamOptions are the settings the provider passes to its upstream as
// they are (native "upstream"); each is a string value or absent.
type upstreamOptions struct {
	effort, promptCacheKey, safetyIdentifier, serviceTier, user value
}

// appendTo appends the native "upstream" object, or nothing when no
// setting is given.
func (u *upstreamOptions) appendTo(dst []byte) []byte {
	first := true
	for _, f := range [...]struct {
		v   value
		key string
	}{{u.effort, `"reasoning_effort":"`}, {u.promptCacheKey, `"prompt_cache_key":"`},
		{u.safetyIdentifier, `"safety_identifier":"`}, {u.serviceTier, `"service_tier":"`}, {u.user, `"user":"`}} {
		if !f.v.IsString() {
			continue
		}
		if first {
			dst = append(dst, `,"upstream":{`...)
			first = false
		} else {
			dst = append(dst, ',')
		}
		dst = append(dst, f.key...)
		dst = guestjson.AppendStringValue(dst, f.v)
		dst = append(dst, '"')
	}
	if !first {
		dst = append(dst, '}')
	}
	return dst
}

// appendMaxToolCalls appends the native tool-call bound, when there is one.
func appendMaxToolCalls(dst []byte, n int64) []byte {
	if n <= 0 {
		return dst
	}
	dst = append(dst, `,"max_tool_calls":`...)
	return strconv.AppendInt(dst, n, 10)
}

// appendEchoKey appends ,"name": for the echoed field i.
func appendEchoKey(dst []byte, i int) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, contract.ResponseEcho[i].Name...)
	return append(dst, '"', ':')
}
