// Command metadata is an example result-mapping plugin for both endpoints:
// it maps run results as the default plugin does, then marks each reply with
// the plugin that mapped it (Responses metadata, chat system_fingerprint).
// The logic is in package metadata beside it; see README.md. Build:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o examples/plugins/build/metadata.wasm ./examples/plugins/metadata
package main

import (
	"github.com/runedge/runedge/examples/plugins/metadata/metadata"
	"github.com/runedge/runedge/plugins/sdk"
)

func init() {
	sdk.Register(sdk.Hooks{
		MapResult: metadata.MapResult,
		SelfTest:  metadata.SelfTest,
		Version:   metadata.Version,
	})
}

func main() {}
