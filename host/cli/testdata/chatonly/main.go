// Command chatonly is a test plugin that maps Chat Completions only: the
// default mapping behind compat.ForEndpoint, which refuses every other
// endpoint with a fault. `plugin check` must report its responses as not
// served, and fail when asked for them.
package main

import (
	"errors"

	"github.com/runedge/runedge/plugins/compat"
	"github.com/runedge/runedge/plugins/sdk"
)

func init() {
	mapRequest := compat.ForEndpoint(compat.EndpointChat, compat.MapRequest)
	sdk.Register(sdk.Hooks{
		MapRequest: func(in []byte) ([]byte, error) {
			out, err := mapRequest(in)
			if ie := (*compat.InputError)(nil); errors.As(err, &ie) {
				return nil, sdk.InvalidInput(ie.Message, ie.Param, ie.Code)
			}
			return out, err
		},
		MapResult: compat.ForEndpoint(compat.EndpointChat, compat.MapResult),
	})
}

func main() {}
