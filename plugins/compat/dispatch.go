package compat

import (
	"errors"

	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/guestjson"
)

// The endpoints a mapping serves, as the host names them in "endpoint".
const (
	EndpointChat      = abi.EndpointChat
	EndpointResponses = abi.EndpointResponses
)

// MapRequest maps a compatible request body to the native run request.
//
// Input, built by the host: an abi.RequestInput,
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
	ri, err := abi.ViewRequestInput(in)
	if err != nil {
		return nil, err
	}
	return MapRequestView(ri)
}

// MapRequestView is MapRequest on an input already read: the host's own
// view of it (abi.RequestInput.View), when the mapping runs natively and
// the body need not be copied into an envelope and skipped over.
func MapRequestView(ri abi.RequestView) ([]byte, error) {
	var mapBody func(value) ([]byte, error)
	switch {
	case ri.Endpoint.Is(EndpointChat):
		mapBody = mapChatRequest
	case ri.Endpoint.Is(EndpointResponses):
		mapBody = mapResponsesRequest
	default:
		return nil, errUnknownEndpoint
	}
	body := ri.Body
	if !body.IsObject() {
		return nil, invalid("", "the request body must be a JSON object")
	}
	return mapBody(body)
}

// MapResult turns a native run result into the endpoint's reply body.
//
// Input, built by the host: an abi.ResultInput (read as an abi.ResultView),
//
//	{"endpoint","id","message_id","created","model","status":"completed"|"in_progress",
//	 "result":{"text","finish_reason":"stop"|"length","usage":{…}},"echo":{…from MapRequest…}}
//
// Output: a chat.completion object, or a Response object (status
// "in_progress" gives the snapshot sent with response.created: no output, no
// usage). Its input comes from the host, so every fault is a plain error.
func MapResult(in []byte) ([]byte, error) {
	v, err := abi.ViewResultInput(in)
	if err != nil {
		return nil, err
	}
	return mapResultView(v)
}

// MapResultView is MapResult on an input already read: the host's own
// view of it (abi.ResultInput.View), when the mapping runs natively and
// the envelope need not be written and parsed between.
func MapResultView(v abi.ResultView) ([]byte, error) {
	if err := v.Check(); err != nil {
		return nil, err
	}
	return mapResultView(v)
}

func mapResultView(v abi.ResultView) ([]byte, error) {
	r := resultInput{v}
	switch {
	case r.Endpoint.Is(EndpointChat):
		return mapChatResult(&r)
	case r.Endpoint.Is(EndpointResponses):
		return mapResponsesResult(&r)
	}
	return nil, errUnknownEndpoint
}

var errUnknownEndpoint = errors.New(`compat: endpoint must be "` + EndpointChat + `" or "` + EndpointResponses + `"`)

// ForEndpoint wraps a hook so that it refuses, with a plain error, any input
// whose endpoint is not endpoint. A plugin that maps only one endpoint
// registers its hooks through it, so a misrouted call fails loudly instead
// of being answered in the wrong shape.
func ForEndpoint(endpoint string, hook func([]byte) ([]byte, error)) func([]byte) ([]byte, error) {
	return func(in []byte) ([]byte, error) {
		if !guestjson.Parse(guestjson.View(in)).Get("endpoint").Is(endpoint) {
			return nil, errors.New("compat: this hook maps only " + endpoint + " inputs")
		}
		return hook(in)
	}
}
