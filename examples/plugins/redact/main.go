// Command redact is an example result-mapping plugin for both endpoints: it
// maps run results as the default plugin does, then replaces e-mail addresses
// and phone numbers in the assistant's text, streamed text included. The
// logic is in package redact beside it; see README.md. Build:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o examples/plugins/build/redact.wasm ./examples/plugins/redact
package main

import (
	"github.com/runedge/runedge/examples/plugins/redact/redact"
	"github.com/runedge/runedge/plugins/sdk"
)

func init() {
	sdk.Register(sdk.Hooks{
		MapResult: redact.MapResult,
		MapStream: sdk.MapStreamFunc(mapStream),
		SelfTest:  redact.SelfTest,
		Version:   redact.Version,
	})
}

// mapStream redacts a batch of streamed text, holding back a tail that may
// be the start of an address or a number until the next batch.
func mapStream(in sdk.StreamInput) (sdk.StreamOutput, error) {
	emit, hold := redact.Stream(in.Text, in.Final)
	return sdk.StreamOutput{Emit: emit, Hold: hold}, nil
}

func main() {}
