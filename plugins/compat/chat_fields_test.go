package compat

import "testing"

// chatWith is a valid chat.completions body with extra members.
func chatWith(extra string) string {
	return `{"model":"service","messages":[{"role":"user","content":"x"}],` + extra + `}`
}

// Fields that would change the answer and cannot be honoured are refused by
// name whenever they ask for something, never dropped.
func TestChatFieldsUnsupported(t *testing.T) {
	for _, c := range []struct{ name, extra, param string }{
		{"logprobs", `"logprobs":true`, "logprobs"},
		{"top_logprobs", `"logprobs":false,"top_logprobs":2`, "top_logprobs"},
		{"stop string", `"stop":"\n"`, "stop"},
		{"stop array", `"stop":["Observation:","\n\n"]`, "stop"},
		{"audio", `"audio":{"voice":"alloy","format":"wav"}`, "audio"},
		{"audio modality", `"modalities":["text","audio"]`, "modalities"},
		{"web search", `"web_search_options":{}`, "web_search_options"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := mapRefused(t, EndpointChat, chatWith(c.extra))
			if got.Param != c.param || got.Code != CodeUnsupportedParameter {
				t.Errorf("got param %q code %q (%s), want %q unsupported_parameter", got.Param, got.Code, got.Message, c.param)
			}
		})
	}
}

// Ignored fields are still checked as OpenAI checks them.
func TestChatFieldsInvalid(t *testing.T) {
	for _, c := range []struct{ name, extra, param string }{
		{"temperature a string", `"temperature":"hot"`, "temperature"},
		{"temperature above 2", `"temperature":2.5`, "temperature"},
		{"temperature negative", `"temperature":-0.1`, "temperature"},
		{"top_p above 1", `"top_p":1.5`, "top_p"},
		{"presence_penalty below -2", `"presence_penalty":-3`, "presence_penalty"},
		{"frequency_penalty a bool", `"frequency_penalty":true`, "frequency_penalty"},
		{"seed fractional", `"seed":1.5`, "seed"},
		{"seed a string", `"seed":"42"`, "seed"},
		{"user a number", `"user":5`, "user"},
		{"metadata a string", `"metadata":"x"`, "metadata"},
		{"logit_bias an array", `"logit_bias":[1]`, "logit_bias"},
		{"store a string", `"store":"yes"`, "store"},
		{"logprobs a string", `"logprobs":"yes"`, "logprobs"},
		{"top_logprobs above 20", `"top_logprobs":21`, "top_logprobs"},
		{"stop a number", `"stop":5`, "stop"},
		{"stop array of numbers", `"stop":[1,2]`, "stop"},
		{"modalities a string", `"modalities":"text"`, "modalities"},
		{"service_tier a number", `"service_tier":1`, "service_tier"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := mapRefused(t, EndpointChat, chatWith(c.extra))
			if got.Param != c.param || got.Code != CodeInvalidBody {
				t.Errorf("got param %q code %q (%s), want %q invalid_body", got.Param, got.Code, got.Message, c.param)
			}
		})
	}
}

// Well-formed hints, and the values that ask for nothing, pass and do not
// change the native request.
func TestChatFieldsAccepted(t *testing.T) {
	want, _ := mapOK(t, EndpointChat, chatWith(`"stream":false`))
	for _, extra := range []string{
		`"temperature":0.7,"top_p":1,"presence_penalty":-2,"frequency_penalty":2,"seed":42`,
		`"temperature":null,"top_p":null,"seed":null,"stop":null,"audio":null,"modalities":null`,
		`"stop":"","logprobs":false,"top_logprobs":0,"web_search_options":null`,
		`"stop":[]`,
		`"modalities":["text"]`,
		`"user":"u-1","metadata":{"k":"v"},"store":true,"logit_bias":{"50256":-100}`,
		`"service_tier":"auto","reasoning_effort":"low","prompt_cache_key":"k","safety_identifier":"s","prediction":{"type":"content","content":"x"}`,
		`"some_future_field":{"anything":[1,2,3]}`,
	} {
		t.Run(extra, func(t *testing.T) {
			if got, _ := mapOK(t, EndpointChat, chatWith(`"stream":false,`+extra)); got != want {
				t.Errorf("request\n got: %s\nwant: %s", got, want)
			}
		})
	}
}
