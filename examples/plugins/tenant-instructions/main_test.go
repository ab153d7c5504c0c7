//go:build !wasip1

package main

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/examples/plugins/tenant-instructions/instructions"
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
	ctx := context.Background()
	if !p.Has(runtime.MapRequest) || p.Has(runtime.MapResult) || p.Has(runtime.MapStream) {
		t.Error("want the map_request hook only")
	}
	if p.Version() != instructions.Version {
		t.Errorf("version %q, want %q", p.Version(), instructions.Version)
	}
	// acme is listed in the shipped tenants.json.
	for _, in := range []string{
		`{"endpoint":"chat.completions","tenant_id":"acme","body":{"model":"service","messages":[{"role":"user","content":"Hi"}]}}`,
		`{"endpoint":"responses","tenant_id":"acme","body":{"model":"service","input":"Hi","instructions":"Be brief."}}`,
	} {
		got, err := p.Call(ctx, runtime.MapRequest, []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		want, err := instructions.MapRequest([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) || !gjson.GetBytes(got, "request.instructions").Exists() {
			t.Errorf("plugin %s\nnative %s", got, want)
		}
	}
	// A client's mistake is a client error (400), not a plugin fault.
	_, err := p.Call(ctx, runtime.MapRequest, []byte(`{"endpoint":"chat.completions","tenant_id":"acme","body":{"model":"service"}}`))
	var ie *runtime.InputError
	if !errors.As(err, &ie) || ie.Param != "messages" {
		t.Errorf("want a client error on messages, got %v", err)
	}
}
