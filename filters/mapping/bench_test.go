package mapping_test

import (
	"testing"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/filters/mapping"
	"github.com/runedge/runedge/plugins/runtime/runtimetest"
)

// BenchmarkMapRequest is the stage's cost per request with the default
// mapping plugin (WebAssembly): one map_request call and its decoding.
func BenchmarkMapRequest(b *testing.B) {
	m, err := mapping.New(runtimetest.Load(b, "github.com/runedge/runedge/plugins/openai"))
	if err != nil {
		b.Fatal(err)
	}
	next := &filtertest.Next{}
	x, _ := filtertest.Exchange(filters.ChatCompletions, body)
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Handle(b.Context(), x, next); err != nil {
			b.Fatal(err)
		}
	}
}
