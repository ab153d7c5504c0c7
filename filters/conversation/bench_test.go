package conversation

import (
	"context"
	"strings"
	"testing"

	"github.com/runedge/runedge/filters"
)

// The stage's cost on a Responses request without conversation (every
// request of the chain pays it): one scan of the body for the key.
func BenchmarkPassThrough(b *testing.B) {
	next := filters.HandlerFunc(func(context.Context, *filters.Exchange) error { return nil })
	st := New(nil)
	for _, size := range []int{1, 100} {
		body := []byte(`{"model":"service","input":"` + strings.Repeat("word ", size*200) + `","store":true}`)
		b.Run(map[int]string{1: "1KB", 100: "100KB"}[size], func(b *testing.B) {
			x := &filters.Exchange{Endpoint: filters.Responses, Body: body}
			b.ReportAllocs()
			for b.Loop() {
				if err := st.Handle(context.Background(), x, next); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
