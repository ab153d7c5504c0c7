//go:build !wasip1

package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/examples/plugins/metadata/metadata"
	"github.com/runedge/runedge/plugins/compat"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/plugins/runtime/runtimetest"
)

// load builds this plugin for wasip1 and loads it as the host does, which
// also runs its self-test.
func load(t *testing.T) *runtime.Plugin {
	t.Helper()
	return runtimetest.Load(t, ".")
}

func TestPlugin(t *testing.T) {
	p := load(t)
	if !p.Has(runtime.MapResult) || p.Has(runtime.MapRequest) || p.Has(runtime.MapStream) {
		t.Error("want the map_result hook only")
	}
	if p.Version() != metadata.Version {
		t.Errorf("version %q, want %q", p.Version(), metadata.Version)
	}
	for endpoint, check := range map[string][2]string{
		compat.EndpointChat:      {"system_fingerprint", metadata.Fingerprint},
		compat.EndpointResponses: {"metadata.mapped_by", "metadata-plugin"},
	} {
		in := []byte(`{"endpoint":"` + endpoint + `","id":"id_1","message_id":"msg_1","created":1700000000,"model":"service",` +
			`"status":"completed","result":{"text":"Hello"},"echo":{"metadata":{"ticket":"T-1"}}}`)
		got, err := p.Call(context.Background(), runtime.MapResult, in)
		if err != nil {
			t.Fatalf("%s: %v", endpoint, err)
		}
		want, err := metadata.MapResult(in)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) || gjson.GetBytes(got, check[0]).Str != check[1] {
			t.Errorf("%s:\nplugin %s\nnative %s", endpoint, got, want)
		}
	}
}
