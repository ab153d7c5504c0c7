package mapping

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/runedge/runedge/bench/mockupstream"
	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/internal/cputime"
	"github.com/runedge/runedge/plugins/native"
	"github.com/runedge/runedge/plugins/plugintest"
	"github.com/runedge/runedge/plugins/runtime"
)

// longChat is a conversation of 40 turns of about 400 bytes each (16 KB),
// what a client that resends its history sends late in a session.
var longChat = func() string {
	var b strings.Builder
	b.WriteString(`{"model":"service","messages":[`)
	for i := range 40 {
		if i > 0 {
			b.WriteByte(',')
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		fmt.Fprintf(&b, `{"role":%q,"content":%q}`, role, strings.Repeat("turn "+strconv.Itoa(i)+" of the conversation, ", 12))
	}
	b.WriteString(`]}`)
	return b.String()
}()

// BenchmarkMapRequest is the map-request stage on a small chat request and
// a responses request with a schema, with the built-in default run natively
// and with its WebAssembly build: the envelope, the hook call and the
// decoding of its output into the native request.
func BenchmarkMapRequest(b *testing.B) {
	ctx := context.Background()
	e, err := runtime.NewEngine(ctx, runtime.EngineConfig{CacheDir: plugintest.CacheDir(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(ctx)
	wasm, err := e.Load(ctx, plugintest.Build(b, "github.com/runedge/runedge/plugins/openai"), runtime.Options{PoolSize: 1})
	if err != nil {
		b.Fatal(err)
	}
	nat, err := native.Load(e, runtime.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []struct {
		name string
		p    *runtime.Plugin
	}{{"native", nat}, {"wasm", wasm}} {
		m, err := New(p.p)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			name string
			ep   filters.Endpoint
			body string
		}{
			{"chat", filters.ChatCompletions, `{"model":"service","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello there runedge"}]}`},
			{"responses-schema", filters.Responses, `{"model":"service","input":"Ada","text":{"format":{"type":"json_schema","name":"p","strict":true,"schema":{"type":"object","additionalProperties":false,"required":["name","born"],"properties":{"name":{"type":"string"},"born":{"type":"integer"}}}}}}`},
			{"chat-long", filters.ChatCompletions, longChat},
			// An agent's 400-message history (229 KB; RATIONALE.md
			// "Agent-sized bodies").
			{"chat-agent", filters.ChatCompletions, string(mockupstream.AgentChat("service", false))},
			// The same history as a Responses input of 400 message items.
			{"responses-agent", filters.Responses, string(mockupstream.AgentInput("service", false))},
		} {
			b.Run(p.name+"/"+c.name, func(b *testing.B) {
				x, _ := filtertest.Exchange(c.ep, c.body)
				next := &filtertest.Next{}
				b.ReportAllocs()
				cpu0 := cputime.Process()
				for b.Loop() {
					if err := m.Handle(ctx, x, next); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
