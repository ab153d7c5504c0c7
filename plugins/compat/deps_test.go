package compat

import (
	"bytes"
	"os"
	"testing"

	"github.com/runedge/runedge/plugins/plugintest"
)

// TestDefaultPluginLinksNoFmtNorGjson keeps the default plugin small: fmt
// (with its reflection), gjson and encoding/json's reflection-based decoder
// (which gjson's modifiers link) were a third of its code, and every byte
// of it is compiled, held and mapped per plugin by every host (RATIONALE.md,
// "Peak RSS"). The host's readers of guest outputs, which use gjson, are
// left out of wasip1 builds of plugins/abi. A Go module names every linked
// function in its data (for tracebacks), which is what this looks for.
func TestDefaultPluginLinksNoFmtNorGjson(t *testing.T) {
	for _, pkg := range []string{"../openai"} {
		wasm, err := os.ReadFile(plugintest.Build(t, pkg))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(wasm, []byte("github.com/runedge/runedge/plugins/compat.MapRequest")) {
			t.Fatalf("%s: function names not found; the test needs another way to see what is linked", pkg)
		}
		for _, fn := range []string{"fmt.(*pp).doPrintf", "github.com/tidwall/gjson.", "encoding/json.(*decodeState).object"} {
			if bytes.Contains(wasm, []byte(fn)) {
				t.Errorf("%s links %s", pkg, fn)
			}
		}
	}
}
