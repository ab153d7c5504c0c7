//go:build !wasip1

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/runedge/runedge/plugins/runtime"
)

// BenchmarkWasmCall measures one call into the plugin as the host makes it,
// with Chat Completions bodies: the per-call cost of the ABI codec and the
// mapping inside the guest.
// bigRequest is a ~7 KB conversation, bigResult a ~2 KB answer with
// newlines and quotes (escaped text).
func BenchmarkWasmCall(b *testing.B) {
	p := load(b)
	var msgs []string
	for i := 0; i < 24; i++ {
		msgs = append(msgs, `{"role":"user","content":"`+strings.Repeat("Tell me about \"wasm\" guests.\n", 8)+`"}`)
	}
	bigRequest := `{"endpoint":"chat.completions","tenant_id":"t","actor":{"id":"a","type":"user","name":"A"},` +
		`"body":{"model":"service","messages":[` + strings.Join(msgs, ",") + `]}}`
	bigResult := strings.Replace(chatResult, `"text":"Hello!"`, `"text":"`+strings.Repeat("A line of \"answer\" text.\n", 80)+`"`, 1)
	for _, c := range []struct {
		name string
		hook runtime.Hook
		in   string
	}{
		{"request", runtime.MapRequest, chatRequest},
		{"bigRequest", runtime.MapRequest, bigRequest},
		{"result", runtime.MapResult, chatResult},
		{"bigResult", runtime.MapResult, bigResult},
	} {
		b.Run(c.name, func(b *testing.B) {
			in := []byte(c.in)
			for b.Loop() {
				if _, err := p.Call(context.Background(), c.hook, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
