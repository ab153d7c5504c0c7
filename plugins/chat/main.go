// Command chat is the default mapping plugin of the Chat Completions endpoint
// (endpoint "chat.completions"): it maps request bodies to native run requests and run
// results to reply bodies with plugins/compat, and refuses inputs meant for
// another endpoint. Build it as a wasip1 reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/build/chat.wasm ./plugins/chat
package main

import (
	"errors"

	"github.com/runedge/runedge/plugins/compat"
	"github.com/runedge/runedge/plugins/sdk"
)

const endpoint = "chat.completions"

func init() {
	sdk.Register(sdk.Hooks{
		MapRequest: mapRequest,
		MapResult:  compat.ForEndpoint(endpoint, compat.MapResult),
		SelfTest:   compat.SelfTest,
	})
}

// mapRequest turns the client's invalid input into the SDK's client error,
// so that the host answers 400 with the field named.
func mapRequest(in []byte) ([]byte, error) {
	out, err := compat.ForEndpoint(endpoint, compat.MapRequest)(in)
	var ie *compat.InputError
	if errors.As(err, &ie) {
		return nil, sdk.InvalidInput(ie.Message, ie.Param, ie.Code)
	}
	return out, err
}

func main() {}
