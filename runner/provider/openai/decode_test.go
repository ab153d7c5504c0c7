package openai

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tidwall/gjson"
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
}

func TestDecodeMatchesJSON(t *testing.T) {
	for _, s := range decodeCases {
		checkChunk(t, []byte(s))
		checkCompletion(t, []byte(s))
	}
}

// TestDecodeFastPath: the shapes upstreams send on every request take the
// fast path (a regression here costs CPU, not correctness).
func TestDecodeFastPath(t *testing.T) {
	for _, s := range decodeCases[:8] {
		if !fastChunk(gjson.Parse(s), new(wireChunk)) && !fastCompletion(gjson.Parse(s), new(wireCompletion)) {
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
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c wireChunk
			json.Unmarshal(data, &c)
		}
	})
}
