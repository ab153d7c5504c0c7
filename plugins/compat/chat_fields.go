package compat

import (
	"math"
	"strconv"
)

// checkChatField checks a chat.completions field that the mapping does not
// carry to the agent. Such fields fall in two groups (docs/api.md
// "Chat completions"):
//
//   - fields that change the answer and that runedge cannot honour (log
//     probabilities, stop sequences, audio output, web search) are refused
//     with unsupported_parameter whenever they ask for something: a client
//     that asked for logprobs or a stop sequence and got an answer without
//     them would be misled, so they are never dropped;
//   - sampling hints and bookkeeping (temperature, top_p, penalties, seed,
//     user, metadata, store, …) do not change what the answer means, so
//     they are accepted and ignored, but checked the way OpenAI checks them
//     (type, and range where it has one): a malformed body is a 400 here as
//     it would be there, not a silent 200.
//
// Any other field is ignored, as OpenAI's clients add fields over time.
func checkChatField(k, v value) error {
	// One decode of the key and a switch on it: a body's every other key
	// passes through here, so this is on the request path.
	switch name := k.Str(); name {
	// Refused when they ask for something.
	case "logprobs":
		on, err := optBool(v, "logprobs")
		if err == nil && on {
			err = unsupported("logprobs", "logprobs are not available from this service")
		}
		return err
	case "top_logprobs":
		if v.IsNull() {
			return nil
		}
		f, ok := v.Num()
		if !ok || f < 0 || f > 20 || f != math.Trunc(f) {
			return invalid("top_logprobs", "top_logprobs must be a whole number from 0 to 20")
		}
		if f > 0 {
			return unsupported("top_logprobs", "logprobs are not available from this service")
		}
	case "stop":
		return checkStop(v)
	case "audio":
		if !v.IsNull() {
			return unsupported("audio", "audio output is not available from this service")
		}
	case "modalities":
		return checkModalities(v)
	case "web_search_options":
		if !v.IsNull() {
			return unsupported("web_search_options", "web search is not available from this service")
		}

	// Accepted and ignored, once well-formed.
	case "temperature":
		return optNumberIn(v, "temperature", 0, 2)
	case "top_p":
		return optNumberIn(v, "top_p", 0, 1)
	case "presence_penalty":
		return optNumberIn(v, "presence_penalty", -2, 2)
	case "frequency_penalty":
		return optNumberIn(v, "frequency_penalty", -2, 2)
	case "seed":
		if v.IsNull() {
			return nil
		}
		if f, ok := v.Num(); !ok || f != math.Trunc(f) {
			return invalid("seed", "seed must be an integer")
		}
	case "store":
		_, err := optBool(v, "store")
		return err
	case "user", "service_tier", "reasoning_effort", "prompt_cache_key", "safety_identifier":
		if !v.IsNull() && !v.IsString() {
			return invalid(name, name+" must be a string")
		}
	case "metadata", "logit_bias", "prediction":
		if !v.IsNull() && !v.IsObject() {
			return invalid(name, name+" must be an object")
		}
	}
	return nil
}

// checkStop refuses stop sequences: the agent would not stop at them. null,
// "" and [] ask for none and pass.
func checkStop(v value) error {
	switch {
	case v.IsNull(), v.Is(""):
		return nil
	case v.IsString():
		return unsupported("stop", "stop sequences are not supported by this service")
	case !v.IsArray():
		return invalid("stop", "stop must be a string or an array of strings")
	}
	var first value // "" for []
	v.Elements(func(s value) bool { first = s; return false })
	switch {
	case first == "":
		return nil
	case !first.IsString():
		return invalid("stop", "stop must be a string or an array of strings")
	}
	return unsupported("stop", "stop sequences are not supported by this service")
}

// checkModalities accepts a text-only answer, which is what runedge gives,
// and refuses any other output modality (audio).
func checkModalities(v value) error {
	if v.IsNull() {
		return nil
	}
	if !v.IsArray() {
		return invalid("modalities", "modalities must be an array of strings")
	}
	var err error
	v.Elements(func(m value) bool {
		switch {
		case !m.IsString():
			err = invalid("modalities", "modalities must be an array of strings")
		case !m.Is("text"):
			err = unsupported("modalities", "only text output is available from this service")
		}
		return err == nil
	})
	return err
}

// optNumberIn checks an optional number against OpenAI's range for it.
func optNumberIn(v value, param string, lo, hi float64) error {
	if v.IsNull() {
		return nil
	}
	if f, ok := v.Num(); !ok || f < lo || f > hi {
		return invalid(param, param+" must be a number from "+
			strconv.FormatFloat(lo, 'g', -1, 64)+" to "+strconv.FormatFloat(hi, 'g', -1, 64))
	}
	return nil
}
