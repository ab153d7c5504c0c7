package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"testing"
	"testing/iotest"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/bench/mockupstream"
	"github.com/runedge/runedge/internal/cputime"
	"github.com/runedge/runedge/internal/jsonfast"

	"github.com/runedge/runedge/runner"
)

// decodeCases are chunks and whole answers as upstreams send them, and the
// shapes the fast path must leave to encoding/json.
var decodeCases = []string{
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok "},"finish_reason":null}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":20,"total_tokens":32}}`,
	`{"id":"c1","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":8,"total_tokens":13}}`,
	`{"id":"c1","object":"chat.completion","created":1700000000,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"message":{"role":"assistant","content":"Benchmark answer.","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":60,"total_tokens":72}}`,
	`{"choices":[{"index":0,"message":{"content":"line\nbreak \"quoted\" \u00e9 \ud83d\ude00"},"finish_reason":"length"}]}`,
	`{"choices":[{"index":0,"delta":{"content":"caf\u00e9 – naïve 日本"}}]}`,
	`{"choices":[{"index":1,"delta":{"content":"second"}},{"index":0,"delta":{"content":"first"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"lone \ud800 surrogate"}}]}`,
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"bad \xff utf8\"}}]}",
	`{"choices":[{"index":0,"delta":{"refusal":"no"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":"think","content":null}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning":"think","reasoning_details":[{"type":"reasoning.text","text":"think"}]}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning":{"effort":"low"},"content":"x"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":7,"reasoning":null}}]}`,
	`{"choices":[{"index":0,"message":{"content":"42","reasoning_content":"6 times 7"},"finish_reason":"stop"}]}`,
	`{"choices":null,"usage":null,"error":null}`,
	`{"error":{"message":"overloaded","type":"server_error"}}`,
	`{"error":"plain"}`,
	`{"Choices":[{"index":0,"delta":{"content":"case"}}]}`,
	`{"choices":[{"INDEX":0,"delta":{"Content":"case"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}],"choices":[{"index":0,"delta":{"content":"b"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]}`,
	`{"cho\u0069ces":[{"index":0,"delta":{"content":"escaped name"}}]}`,
	`{"choices":[{"index":0.5,"delta":{"content":"x"}}]}`,
	`{"choices":[{"index":1e0,"delta":{"content":"x"}}]}`,
	`{"choices":[{"index":"0","delta":{"content":"x"}}]}`,
	`{"choices":[{"index":-1,"delta":{"content":"x"}}]}`,
	`{"choices":[{"index":99999999999999999999,"delta":{"content":"x"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":7}}]}`,
	`{"choices":[{"index":0,"delta":{"content":null},"finish_reason":null}]}`,
	`{"choices":[null]}`,
	`{"choices":{"index":0}}`,
	`{"choices":[{"index":0,"delta":"text"}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f","arguments":"{\"a\":"}}]}}]}`,
	`{"choices":[{"index":0,"message":{"content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
	`{"usage":{"prompt_tokens":1.5}}`,
	`{"usage":{"prompt_tokens":1,"prompt_tokens":2}}`,
	`{"usage":[]}`,
	`{"usage":{"PROMPT_TOKENS":3}}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"total_tokens":4},"extra":{"nested":[1,2,{"a":null}]}}`,
	`[]`, `null`, `"s"`, `{}`, ` {"choices":[]} `,
	`{"choices":[{"index":0,"delta":{"content":"unterminated}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}]`,
	`{"choices":[{"index":0,"delta":{"content":"tab	inside"}}]}`,
	`{"choices":[{"index":01}]}`,
	``, `[DONE]`,
	detailsCase,
	`{"usage":{"prompt_tokens":3,"prompt_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":null}}}`,
	`{"usage":{"prompt_tokens_details":{"cached_tokens":"7"}}}`,
	`{"usage":{"prompt_tokens_details":[],"completion_tokens_details":{"REASONING_TOKENS":1}}}`,
}

// detailsCase reports every usage detail an upstream may give.
const detailsCase = `{"choices":[],"usage":{"prompt_tokens":30,"completion_tokens":25,"total_tokens":55,` +
	`"prompt_tokens_details":{"cached_tokens":7,"cache_write_tokens":2,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":18}}}`

func TestDecodeMatchesJSON(t *testing.T) {
	for _, s := range decodeCases {
		checkChunk(t, []byte(s))
		checkCompletion(t, []byte(s))
	}
}

// TestDecodeFastPath: the shapes upstreams send on every request take the
// fast path (a regression here costs CPU, not correctness).
func TestDecodeFastPath(t *testing.T) {
	for _, s := range append(decodeCases[:8:8], detailsCase) {
		if !fastChunk(jsonfast.Doc(s), new(wireChunk)) && !fastCompletion(jsonfast.Doc(s), new(wireCompletion)) {
			t.Errorf("not on the fast path: %s", s)
		}
	}
}

func FuzzDecodeChunk(f *testing.F) {
	for _, s := range decodeCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkChunk(t, data)
		checkCompletion(t, data)
	})
}

func checkChunk(t *testing.T, data []byte) {
	t.Helper()
	var got, want wireChunk
	gotErr, wantErr := decodeChunk(data, &got), json.Unmarshal(data, &want)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("chunk %q: error %v, encoding/json says %v", data, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(normChunk(got), normChunk(want)) {
		t.Fatalf("chunk %q:\n got %+v\nwant %+v", data, got, want)
	}
}

func checkCompletion(t *testing.T, data []byte) {
	t.Helper()
	var got, want wireCompletion
	gotErr, wantErr := decodeCompletion(data, &got), json.Unmarshal(data, &want)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("completion %q: error %v, encoding/json says %v", data, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(normCompletion(got), normCompletion(want)) {
		t.Fatalf("completion %q:\n got %+v\nwant %+v", data, got, want)
	}
}

// norm* make an empty slice and a nil one alike: the provider only ranges
// over them.
func normChunk(c wireChunk) wireChunk {
	if len(c.Choices) == 0 {
		c.Choices = nil
	}
	for i := range c.Choices {
		if len(c.Choices[i].Delta.ToolCalls) == 0 {
			c.Choices[i].Delta.ToolCalls = nil
		}
	}
	if len(c.Error) == 0 {
		c.Error = nil
	}
	return c
}

func normCompletion(c wireCompletion) wireCompletion {
	if len(c.Choices) == 0 {
		c.Choices = nil
	}
	for i := range c.Choices {
		if len(c.Choices[i].Message.ToolCalls) == 0 {
			c.Choices[i].Message.ToolCalls = nil
		}
	}
	if len(c.Error) == 0 {
		c.Error = nil
	}
	return c
}

// BenchmarkDecodeChunk is one stream chunk (fast) against encoding/json.
func BenchmarkDecodeChunk(b *testing.B) {
	data := []byte(decodeCases[1])
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c wireChunk
			decodeChunk(data, &c)
		}
	})
	// bench-edge's mock chunk (bench/mockupstream).
	edge := []byte(`{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"mock-model","choices":[{"index":0,"delta":{"content":"tok07 "},"finish_reason":null}]}`)
	b.Run("bench-edge", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c wireChunk
			decodeChunk(edge, &c)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c wireChunk
			json.Unmarshal(data, &c)
		}
	})
}

// TestPlainBodyMatchesMarshal: the request body written by hand is the one
// json.Marshal writes, byte for byte, and requests it does not cover go to
// json.Marshal.
func TestPlainBodyMatchesMarshal(t *testing.T) {
	strs := []string{"", "hello", "Be brief.", `q"b\s/`, "line\nbreak\ttab\r\b\f\x00\x1f\x7f", "<a&b>", "é 漢字 🙂",
		"\u2028\u2029", "bad \xff byte", "m-1"}
	for _, model := range strs {
		for _, s := range strs {
			for _, stream := range []bool{false, true} {
				for _, max := range []int{0, 64, -1} {
					req := runner.ProviderRequest{Messages: []runner.Message{{Role: "system", Content: model}, {Role: "user", Content: s}},
						Stream: stream, MaxOutputTokens: max}
					checkBody(t, model, req, true)
				}
			}
		}
	}
	checkBody(t, "m", runner.ProviderRequest{}, true)
	// Texts with the literal they were read from (jsonfast.StringLiteral,
	// as the host's decoder reads a mapping's output) go as written.
	lits := []string{`"plain"`, `"a\u003cb\u003e \u0026 <c>&"`, `"\/\"\\\b\f\n\r\t\u0000\u001f"`,
		`"\ud83d\ude42 🙂 \u2028  "`, `"\u00e9\u6F22"`, `"bad \ud800 half"`, "\"bad \xff byte\"", `""`}
	for _, lit := range lits {
		m := runner.Message{Role: "user"}
		l, ok := jsonfast.StringLiteral(jsonfast.Value(lit), &m.Content)
		if !ok {
			t.Fatalf("%s does not read", lit)
		}
		m.SetContentJSON(l)
		checkBody(t, "m", runner.ProviderRequest{Messages: []runner.Message{{Role: "system", Content: "<x>"}, m}}, true)
		// A text changed since it was read goes escaped afresh.
		changed := m
		changed.Content += "!"
		if _, ok := changed.ContentJSON(); ok {
			t.Errorf("%s: a changed text keeps its literal", lit)
		}
		checkBody(t, "m", runner.ProviderRequest{Messages: []runner.Message{changed}}, true)
	}
	for _, s := range strs {
		checkBody(t, "m", runner.ProviderRequest{Messages: []runner.Message{{Role: "user", Content: "x"}},
			Upstream: runner.Upstream{ReasoningEffort: s, PromptCacheKey: s, SafetyIdentifier: "s1", ServiceTier: s, User: s}}, true)
		checkBody(t, "m", runner.ProviderRequest{Messages: []runner.Message{{Role: "user", Content: "x"}},
			Upstream: runner.Upstream{User: s}}, true)
	}
	for _, req := range []runner.ProviderRequest{
		{Messages: []runner.Message{{Role: "user", Content: "x"}}, Tools: []runner.Tool{{Name: "f"}}},
		{Messages: []runner.Message{{Role: "user", Content: "x"}}, OutputSchema: []byte(`{"type":"object"}`)},
		{Messages: []runner.Message{{Role: "user", Content: "x"}}, JSONObject: true},
		{Messages: []runner.Message{{Role: "tool", Content: "x", ToolCallID: "c"}}},
		{Messages: []runner.Message{{Role: "assistant", ToolCalls: []runner.ToolCall{{ID: "c", Name: "f"}}}}},
	} {
		checkBody(t, "m", req, false)
	}
}

func checkBody(t *testing.T, model string, req runner.ProviderRequest, plain bool) {
	t.Helper()
	for _, usage := range []bool{false, true} {
		p := &Provider{cfg: Config{Model: model, IncludeUsage: usage}}
		got, err := p.body(req)
		if err != nil {
			t.Fatal(err)
		}
		u := req.Upstream
		w := wireRequest{Model: model, Messages: wireMessages(req.Messages), Stream: req.Stream,
			MaxTokens: req.MaxOutputTokens, Tools: wireTools(req.Tools), ReasoningEffort: u.ReasoningEffort,
			PromptCacheKey: u.PromptCacheKey, SafetyIdentifier: u.SafetyIdentifier, ServiceTier: u.ServiceTier, User: u.User}
		if len(w.Tools) > 0 {
			w.ToolChoice, w.ParallelToolCalls = wireToolChoice(req.ToolChoice), req.ParallelToolCalls
		}
		if req.Stream && usage {
			w.StreamOptions = &streamOptions{IncludeUsage: true}
		}
		switch {
		case len(req.OutputSchema) > 0:
			w.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{Name: schemaName(req.SchemaName), Schema: req.OutputSchema}}
		case req.JSONObject:
			w.ResponseFormat = &responseFormat{Type: "json_object"}
		}
		want, _ := json.Marshal(w)
		if plain { // as json.Marshal writes it, < > & not escaped
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(w); err != nil {
				t.Fatal(err)
			}
			want = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		}
		literal := false
		for i := range req.Messages {
			if lit, ok := req.Messages[i].ContentJSON(); ok {
				literal = true
				if !bytes.Contains(got, []byte(`,"content":`+lit+`}`)) {
					t.Errorf("content %s not copied into %s", lit, got)
				}
			}
		}
		if !literal && string(got) != string(want) {
			t.Fatalf("body\n got %s\nwant %s", got, want)
		}
		var gotV, wantV any
		if err := json.Unmarshal(got, &gotV); err != nil {
			t.Fatalf("body %s: %v", got, err)
		}
		if err := json.Unmarshal(want, &wantV); err != nil || !reflect.DeepEqual(gotV, wantV) {
			t.Fatalf("body\n got %s\nwant %s (%v)", got, want, err)
		}
		if _, ok := p.plainParts(req); ok != plain {
			t.Errorf("plainParts ok = %v for %+v", ok, req)
		}
		// The transport reads the same bytes, whatever its reads' sizes.
		ub, err := p.upstreamBody(req)
		if err != nil {
			t.Fatal(err)
		}
		if ub.n != len(got) {
			t.Errorf("the body's length %d, its bytes %d", ub.n, len(got))
		}
		if err := iotest.TestReader(ub.reader(), got); err != nil {
			t.Errorf("reading the body: %v", err)
		}
	}
}

// TestDecodeChunkReused: a stream decodes every chunk into the same value;
// what each chunk reads must not depend on the chunk before it.
func TestDecodeChunkReused(t *testing.T) {
	norm := func(c wireChunk) wireChunk {
		if len(c.Choices) == 0 {
			c.Choices = nil
		}
		return c
	}
	for _, prev := range decodeCases {
		for _, s := range decodeCases {
			var fresh, reused wireChunk
			errFresh := decodeChunk([]byte(s), &fresh)
			decodeChunk([]byte(prev), &reused)
			errReused := decodeChunk([]byte(s), &reused)
			if (errFresh == nil) != (errReused == nil) {
				t.Fatalf("after %s, %s: error %v, fresh %v", prev, s, errReused, errFresh)
			}
			if errFresh == nil && !reflect.DeepEqual(norm(fresh), norm(reused)) {
				t.Errorf("after %s, %s:\n got %+v\nwant %+v", prev, s, reused, fresh)
			}
		}
	}
}

// BenchmarkAgentBody writes the upstream body of an agent's 400-message
// history (mockupstream.AgentChat, 229 KB) and reads it as the transport
// does, 32 KiB at a time: "escaped" with each text escaped afresh,
// "copied" with each text's literal as the host's decoder records it
// (runner.Message.ContentJSON).
func BenchmarkAgentBody(b *testing.B) {
	var msgs []runner.Message
	gjson.GetBytes(mockupstream.AgentChat("service", false), "messages").ForEach(func(_, m gjson.Result) bool {
		msg := runner.Message{Role: m.Get("role").Str}
		lit, _ := jsonfast.StringLiteral(jsonfast.Value(m.Get("content").Raw), &msg.Content)
		msg.SetContentJSON(lit)
		msgs = append(msgs, msg)
		return true
	})
	p := &Provider{cfg: Config{Model: "up-model"}}
	for _, c := range []struct {
		name    string
		literal bool
	}{{"escaped", false}, {"copied", true}} {
		b.Run(c.name, func(b *testing.B) {
			req := runner.ProviderRequest{Messages: slices.Clone(msgs)}
			for i := range req.Messages {
				if !c.literal {
					req.Messages[i].SetContentJSON("")
				}
			}
			buf := make([]byte, 32<<10)
			b.ReportAllocs()
			cpu0 := cputime.Process()
			for b.Loop() {
				body, err := p.upstreamBody(req)
				if err != nil {
					b.Fatal(err)
				}
				if n, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, struct{ io.Reader }{body.reader()}, buf); err != nil || n != int64(body.n) {
					b.Fatal(n, err)
				}
			}
			b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
