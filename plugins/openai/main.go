// Command openai is the default mapping plugin of both OpenAI-compatible
// endpoints, Chat Completions ("chat.completions") and Responses
// ("responses"): it maps request bodies to native run requests and run
// results to chat.completion bodies or Response objects with
// plugins/compat, choosing the shape by the input's "endpoint" and refusing
// any other endpoint. One module for both means the host compiles it once
// and both chains share one plugin (RATIONALE.md, "Peak RSS"). Build it as
// a wasip1 reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/build/openai.wasm ./plugins/openai
package main

import (
	"errors"

	"github.com/runedge/runedge/plugins/compat"
	"github.com/runedge/runedge/plugins/sdk"
)

// The hooks, wrapped once here rather than on every call. compat.MapRequest
// and compat.MapResult dispatch on "endpoint" and fail with a plain error
// (a fault, HTTP 500) on an endpoint they do not map, so a misrouted call
// is never answered in the wrong shape.
var (
	mapRequest = clientErrors(compat.MapRequest)
	mapResult  = compat.MapResult
)

func init() {
	sdk.Register(sdk.Hooks{MapRequest: mapRequest, MapResult: mapResult, SelfTest: compat.SelfTest})
}

// clientErrors hands compat's InputError to the SDK as a client error, so the
// host answers 400 naming the field instead of 500.
func clientErrors(hook func([]byte) ([]byte, error)) func([]byte) ([]byte, error) {
	return func(in []byte) ([]byte, error) {
		out, err := hook(in)
		if ie := (*compat.InputError)(nil); errors.As(err, &ie) {
			return nil, sdk.InvalidInput(ie.Message, ie.Param, ie.Code)
		}
		return out, err
	}
}

func main() {}
