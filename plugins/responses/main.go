// Command responses is the default mapping plugin of the Responses
// endpoint ("responses"): it maps request bodies to native run
// requests and run results to Response objects with plugins/compat, and
// refuses inputs meant for another endpoint. Build it as a wasip1 reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/build/responses.wasm ./plugins/responses
package main

import (
	"errors"

	"github.com/runedge/runedge/plugins/compat"
	"github.com/runedge/runedge/plugins/sdk"
)

// The hooks, wrapped once here rather than on every call.
var (
	mapRequest = clientErrors(compat.ForEndpoint(compat.EndpointResponses, compat.MapRequest))
	mapResult  = compat.ForEndpoint(compat.EndpointResponses, compat.MapResult)
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
