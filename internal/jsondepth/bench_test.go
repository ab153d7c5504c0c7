package jsondepth

import "testing"

var body = []byte(`{"model":"service","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"What is the capital of France?"}],"stream":true,"stream_options":{"include_usage":true}}`)

func BenchmarkExceeds(b *testing.B) {
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if Exceeds(body, 128) >= 0 {
			b.Fatal("deep")
		}
	}
}
