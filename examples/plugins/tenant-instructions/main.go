// Command tenant-instructions is an example request-mapping plugin for both
// endpoints: it maps requests as the default plugin does, then puts the
// calling tenant's instructions (from tenants.json, compiled in) first. The
// logic is in package instructions beside it; see README.md. Build:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o examples/plugins/build/tenant-instructions.wasm ./examples/plugins/tenant-instructions
package main

import (
	"errors"

	"github.com/runedge/runedge/examples/plugins/tenant-instructions/instructions"
	"github.com/runedge/runedge/plugins/compat"
	"github.com/runedge/runedge/plugins/sdk"
)

func init() {
	sdk.Register(sdk.Hooks{
		MapRequest: mapRequest,
		SelfTest:   instructions.SelfTest,
		Version:    instructions.Version,
	})
}

// mapRequest hands the default mapping's client errors to the SDK as such,
// so the host answers 400 naming the field instead of 500.
func mapRequest(in []byte) ([]byte, error) {
	out, err := instructions.MapRequest(in)
	if ie := (*compat.InputError)(nil); errors.As(err, &ie) {
		return nil, sdk.InvalidInput(ie.Message, ie.Param, ie.Code)
	}
	return out, err
}

func main() {}
