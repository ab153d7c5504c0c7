package compat

import "errors"

// The endpoints a mapping serves, as the host names them in "endpoint".
const (
	EndpointChat      = "chat.completions"
	EndpointResponses = "responses"
)

// MapRequest maps a compatible request body to the native run request.
//
// Input, built by the host:
//
//	{"endpoint":"chat.completions"|"responses","tenant_id":"…","actor":{…},"body":{…client body…}}
//
// Output:
//
//	{"request":{"input":[{"role","content"}…],"instructions","output_schema","schema_name",
//	 "json_object","stream","max_output_tokens"},"echo":{…}}
//
// where empty optional request fields are left out and echo carries what
// [MapResult] needs later (chat: include_usage; responses: the settings the
// Response object repeats). A client fault returns an *[InputError]; an
// input the host should never build (unknown endpoint) a plain error.
func MapRequest(in []byte) ([]byte, error) {
	var endpoint, body value
	parseValue(view(in)).members(func(k, v value) bool {
		switch {
		case k.is("endpoint"):
			endpoint = v
		case k.is("body"):
			body = v
		}
		return true
	})
	var mapBody func(value) ([]byte, error)
	switch {
	case endpoint.is(EndpointChat):
		mapBody = mapChatRequest
	case endpoint.is(EndpointResponses):
		mapBody = mapResponsesRequest
	default:
		return nil, errUnknownEndpoint
	}
	if !body.isObject() {
		return nil, invalid("", "the request body must be a JSON object")
	}
	return mapBody(body)
}

// MapResult turns a native run result into the endpoint's reply body.
//
// Input, built by the host:
//
//	{"endpoint","id","message_id","created","model","status":"completed"|"in_progress",
//	 "result":{"text","finish_reason":"stop"|"length","usage":{…}},"echo":{…from MapRequest…}}
//
// Output: a chat.completion object, or a Response object (status
// "in_progress" gives the snapshot sent with response.created: no output, no
// usage). Its input comes from the host, so every fault is a plain error.
func MapResult(in []byte) ([]byte, error) {
	var r resultInput
	parseValue(view(in)).members(r.collect)
	switch {
	case r.endpoint.is(EndpointChat):
		return mapChatResult(&r)
	case r.endpoint.is(EndpointResponses):
		return mapResponsesResult(&r)
	}
	return nil, errUnknownEndpoint
}

var errUnknownEndpoint = errors.New(`compat: endpoint must be "chat.completions" or "responses"`)

// ForEndpoint wraps a hook so that it refuses, with a plain error, any input
// whose endpoint is not endpoint. A plugin that maps only one endpoint
// registers its hooks through it, so a misrouted call fails loudly instead
// of being answered in the wrong shape.
func ForEndpoint(endpoint string, hook func([]byte) ([]byte, error)) func([]byte) ([]byte, error) {
	return func(in []byte) ([]byte, error) {
		if !parseValue(view(in)).get("endpoint").is(endpoint) {
			return nil, errors.New("compat: this hook maps only " + endpoint + " inputs")
		}
		return hook(in)
	}
}
