package contract

// EchoField is a field of the Response object that repeats a request
// setting, with the JSON the Response shows when the request left the
// setting out (the API's documented default, or null).
type EchoField struct {
	Name    string
	Default string
}

// The indexes of ResponseEcho, for a mapping that keeps the echoed values
// in an array: e[EchoTemperature] is the temperature's.
const (
	EchoInstructions = iota
	EchoMetadata
	EchoTemperature
	EchoTopP
	EchoMaxOutputTokens
	EchoText
	EchoToolChoice
	EchoTools
	EchoParallelToolCalls
	EchoStore
	EchoTruncation
	EchoUser
	EchoPreviousResponseID
	EchoBackground
	EchoPresencePenalty
	EchoFrequencyPenalty
	EchoTopLogprobs
	EchoMaxToolCalls
	EchoServiceTier
	EchoSafetyIdentifier
	EchoPromptCacheKey
	EchoReasoning
	// NumEcho is the number of echoed fields.
	NumEcho
)

// ResponseEcho is every Response field that echoes a request setting,
// indexed by the Echo constants. The default mapping carries them from
// map_request to map_result (plugins/compat), and a WebSocket pre-warm,
// which makes no run, echoes them itself.
var ResponseEcho = [NumEcho]EchoField{
	EchoInstructions:       {"instructions", "null"},
	EchoMetadata:           {"metadata", "{}"},
	EchoTemperature:        {"temperature", "1"},
	EchoTopP:               {"top_p", "1"},
	EchoMaxOutputTokens:    {"max_output_tokens", "null"},
	EchoText:               {"text", `{"format":{"type":"text"}}`},
	EchoToolChoice:         {"tool_choice", `"auto"`},
	EchoTools:              {"tools", "[]"},
	EchoParallelToolCalls:  {"parallel_tool_calls", "true"},
	EchoStore:              {"store", "true"},
	EchoTruncation:         {"truncation", `"disabled"`},
	EchoUser:               {"user", "null"},
	EchoPreviousResponseID: {"previous_response_id", "null"},
	EchoBackground:         {"background", "false"},
	EchoPresencePenalty:    {"presence_penalty", "0"},
	EchoFrequencyPenalty:   {"frequency_penalty", "0"},
	EchoTopLogprobs:        {"top_logprobs", "0"},
	EchoMaxToolCalls:       {"max_tool_calls", "null"},
	EchoServiceTier:        {"service_tier", `"default"`},
	EchoSafetyIdentifier:   {"safety_identifier", "null"},
	EchoPromptCacheKey:     {"prompt_cache_key", "null"},
	EchoReasoning:          {"reasoning", `{"effort":null,"summary":null}`},
}

// EchoConversation is the echo key under which the host adds the
// conversation a response continues ({"id"}; filters/run). It has no
// default: a Response shows it only when the request named a conversation.
const EchoConversation = "conversation"

// EchoIndex returns the index in ResponseEcho of the field named name, -1
// for a name that is not echoed.
func EchoIndex(name string) int {
	for i := range ResponseEcho {
		if ResponseEcho[i].Name == name {
			return i
		}
	}
	return -1
}
