package socket

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// exact is s in a slice whose capacity is its length: the cache counts
// what an entry holds by capacity, and a conversion may round it up.
func exact(s string) []byte {
	b := make([]byte, len(s))
	copy(b, s)
	return b
}

func TestCacheBounds(t *testing.T) {
	c := NewCache(2, 20)
	c.put("a", &entry{items: exact("[1]")})
	c.put("b", &entry{items: exact("[2]")})
	c.put("c", &entry{items: exact("[3]")}) // over the count: a goes
	if _, ok := c.get("a"); ok || c.Len() != 2 {
		t.Fatalf("after three puts: %d, a kept %v", c.Len(), ok)
	}
	c.put("d", &entry{items: exact("[" + strings.Repeat("1", 16) + "]")}) // 18 bytes: b and c go
	if _, ok := c.get("c"); ok || c.Len() != 1 || c.bytes != 18 {
		t.Fatalf("after a large put: %d entries, %d bytes", c.Len(), c.bytes)
	}
	c.put("e", &entry{items: exact("[" + strings.Repeat("1", 30) + "]")}) // larger than the bound: not kept
	if _, ok := c.get("e"); ok {
		t.Fatal("an entry over the byte bound was kept")
	}
	c.remove("d")
	if c.Len() != 0 || c.bytes != 0 {
		t.Fatalf("after remove: %d entries, %d bytes", c.Len(), c.bytes)
	}
}

func TestParseExpandsCachedContinuation(t *testing.T) {
	c := NewCache(4, 1<<20)
	c.put("resp_1", &entry{items: []byte(`[{"role":"user","content":"a"},{"type":"message","role":"assistant","content":"b"}]`), prev: "resp_0"})
	tr, e := parse([]byte(`{"type":"response.create","model":"service","input":"c","previous_response_id":"resp_1","stream_id":"x","generate":true}`), c)
	if e != nil {
		t.Fatal(e)
	}
	b := gjson.ParseBytes(tr.body)
	if b.Get("type").Exists() || b.Get("stream_id").Exists() || b.Get("generate").Exists() || !b.Get("stream").Bool() {
		t.Fatalf("socket fields left in the body: %s", tr.body)
	}
	if got := b.Get("input.#.content").Raw; got != `["a","b","c"]` {
		t.Fatalf("expanded input %s", got)
	}
	if b.Get("previous_response_id").Str != "resp_0" || tr.local != "resp_1" {
		t.Fatalf("previous_response_id %s, local %s", b.Get("previous_response_id").Raw, tr.local)
	}
	// Not cached: passed on for the store to resolve.
	tr, _ = parse([]byte(`{"type":"response.create","input":[],"previous_response_id":"resp_9"}`), c)
	if gjson.GetBytes(tr.body, "previous_response_id").Str != "resp_9" || tr.local != "" {
		t.Fatalf("uncached id: %s", tr.body)
	}
	// Nested form.
	tr, _ = parse([]byte(`{"type":"response.create","response":{"model":"service","input":"x","store":false}}`), c)
	if tr.store || gjson.GetBytes(tr.body, "model").Str != "service" {
		t.Fatalf("nested: %s", tr.body)
	}
}

func TestRememberChainsAndEvicts(t *testing.T) {
	c := NewCache(4, 1<<20)
	tr, _ := parse([]byte(`{"type":"response.create","input":"q1","store":false}`), c)
	done := []byte(`{"type":"response.completed","response":{"id":"resp_1","output":[{"type":"message","role":"assistant","content":"a1"}]}}`)
	tr.remember(c, done, "sess", "thr", false)
	e, ok := c.get("resp_1")
	if !ok || e.sessionID != "sess" || gjson.GetBytes(e.items, "#.content").Raw != `["q1","a1"]` {
		t.Fatalf("remembered %+v", e)
	}
	// A stored turn is not cached; a failed continuation evicts.
	tr, _ = parse([]byte(`{"type":"response.create","input":"q2","previous_response_id":"resp_1"}`), c)
	tr.remember(c, nil, "", "", true)
	if _, ok := c.get("resp_1"); ok {
		t.Fatal("a failed continuation kept its state")
	}
}

// The chain's body is the event's fields but the socket's own, once each,
// with stream on whatever the event said; a bad generate or background
// is refused.
func TestParseBody(t *testing.T) {
	c := NewCache(4, 1<<20)
	tr, e := parse([]byte(`{"type":"response.create","model":"service","stream":false,"stream_options":{"include_obfuscation":false},"input":"hi","store":false,"metadata":{"a":"b"}}`), c)
	if e != nil {
		t.Fatal(e)
	}
	if want := `{"model":"service","input":"hi","store":false,"metadata":{"a":"b"},"stream":true}`; string(tr.body) != want {
		t.Fatalf("body %s, want %s", tr.body, want)
	}
	if tr.store || !tr.generate || gjson.GetBytes(tr.input, "0.content").Str != "hi" {
		t.Fatalf("turn %+v", tr)
	}
	for ev, param := range map[string]string{
		`{"type":"response.create","generate":"no"}`:    "generate",
		`{"type":"response.create","background":true}`:  "background",
		`{"type":"response.create","background":"yes"}`: "background",
	} {
		if _, e := parse([]byte(ev), c); e == nil || e.Status != 400 || e.Param != param {
			t.Errorf("%s: %+v", ev, e)
		}
	}
}
