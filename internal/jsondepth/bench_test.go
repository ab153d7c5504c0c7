package jsondepth

import (
	"testing"

	"github.com/runedge/runedge/bench/mockupstream"
	"github.com/runedge/runedge/internal/cputime"
)

var body = []byte(`{"model":"service","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"What is the capital of France?"}],"stream":true,"stream_options":{"include_usage":true}}`)

func BenchmarkExceeds(b *testing.B) {
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if Exceeds(body, 128) >= 0 {
			b.Fatal("deep")
		}
	}
}

// BenchmarkExceedsAgent is the check on an agent-sized body (a
// 400-message, 229 KB history): long strings with escapes.
func BenchmarkExceedsAgent(b *testing.B) {
	agent := mockupstream.AgentChat("service", false)
	b.SetBytes(int64(len(agent)))
	cpu0 := cputime.Process()
	for b.Loop() {
		if Exceeds(agent, 128) >= 0 {
			b.Fatal("deep")
		}
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
}
