// Package mockupstream is the mock OpenAI-compatible upstream of
// `make bench-edge` (bench/edge) and of the Go benchmarks that measure the
// same stream in one process (host/server's BenchmarkStream20): one
// definition, so both measure the same bytes.
package mockupstream

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Completion is the fixed non-stream answer (about 640 bytes, as in the
// issue's measurement).
var Completion = []byte(`{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":"mock-model","system_fingerprint":"fp_bench","choices":[{"index":0,"message":{"role":"assistant","content":"` +
	strings.Repeat("Benchmark answer text. ", 14) + `","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":60,"total_tokens":72}}`)

// Stream20 is the fixed 20-chunk stream, with a final usage chunk.
var Stream20 = func() []byte {
	var b bytes.Buffer
	for i := range 20 {
		fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"mock-model\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%02d \"},\"finish_reason\":null}]}\n\n", i)
	}
	b.WriteString("data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"mock-model\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":20,\"total_tokens\":32}}\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}()

// Handler answers POST /v1/chat/completions with Completion, or Stream20
// when the body asks for a stream. It does as little as it can, so the
// targets' costs stand out.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error","param":null,"code":null}}`, 404)
			return
		}
		if wantsStream(body) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write(Stream20)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(Completion)
	})
}

// wantsStream reports whether body has a member "stream" that is true,
// spaces allowed around the colon: one scan, no copy, so the upstream's
// cost stays small beside an agent-sized body.
func wantsStream(body []byte) bool {
	key := []byte(`"stream"`)
	for {
		i := bytes.Index(body, key)
		if i < 0 {
			return false
		}
		body = body[i+len(key):]
		rest := bytes.TrimLeft(body, " ")
		if len(rest) > 0 && rest[0] == ':' && bytes.HasPrefix(bytes.TrimLeft(rest[1:], " "), []byte("true")) {
			return true
		}
	}
}
