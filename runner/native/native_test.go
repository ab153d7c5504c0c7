package native

import (
	"encoding/json"
	"testing"
	"unsafe"
)

// The JSON form of these types is part of the plugin ABI; a changed tag is a
// break for every plugin, so the encoding is pinned here.
func TestWireForm(t *testing.T) {
	req := Request{
		Input:           []Message{{Role: "user", Content: "hi"}},
		Instructions:    "be brief",
		OutputSchema:    json.RawMessage(`{"type":"object"}`),
		SchemaName:      "s",
		JSONObject:      true,
		Stream:          true,
		MaxOutputTokens: 7,
	}
	res := Result{Text: "ok", FinishReason: "stop", Usage: Usage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3}, Attempts: 2}
	for _, c := range []struct {
		v    any
		want string
	}{
		{req, `{"input":[{"role":"user","content":"hi"}],"instructions":"be brief","output_schema":{"type":"object"},"schema_name":"s","json_object":true,"stream":true,"max_output_tokens":7}`},
		{Request{}, `{"input":null,"stream":false}`},
		{res, `{"text":"ok","finish_reason":"stop","usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3},"attempts":2}`},
		{Result{}, `{"text":"","finish_reason":"","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}}`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%T:\n got %s\nwant %s", c.v, b, c.want)
		}
	}
}

// TestMessageSize: a Message is 176 bytes. An agent's history is one
// array of Messages per request (400 for mockupstream.AgentChat, room for
// 448), allocated and scanned whole; at 184 bytes that array took 11 pages
// of 8 KiB, at 176 it takes 10.
func TestMessageSize(t *testing.T) {
	if s := unsafe.Sizeof(Message{}); s > 176 {
		t.Errorf("a Message is %d bytes", s)
	}
}

// TestPendingTextKeepsItsMarshaledForm: the pending length and the
// marshaled flag share a word; each reads back as set, and decoding the
// text keeps the flag and ends the pending.
func TestPendingTextKeepsItsMarshaledForm(t *testing.T) {
	for _, marshaled := range []bool{false, true} {
		var m Message
		m.Role = "user"
		m.SetContentPending(`"a\"b\nc"`, 5, marshaled)
		if !m.ContentPending() || m.TextLen() != 5 || m.Text() != "a\"b\nc" {
			t.Fatalf("marshaled %v: pending %v, length %d, text %q", marshaled, m.ContentPending(), m.TextLen(), m.Text())
		}
		if _, ok := m.ContentMarshaled(); ok != marshaled {
			t.Errorf("marshaled %v: ContentMarshaled ok %v", marshaled, ok)
		}
		m.DecodeContent()
		if m.ContentPending() || m.Content != "a\"b\nc" || m.TextLen() != 5 {
			t.Errorf("decoded: pending %v, content %q", m.ContentPending(), m.Content)
		}
		if lit, ok := m.ContentMarshaled(); ok != marshaled || (ok && lit != `"a\"b\nc"`) {
			t.Errorf("decoded, marshaled %v: ContentMarshaled %q %v", marshaled, lit, ok)
		}
		if lit, ok := m.ContentJSON(); !ok || lit != `"a\"b\nc"` {
			t.Errorf("decoded: ContentJSON %q %v", lit, ok)
		}
	}
}
