package schema

import (
	"fmt"
	"testing"
)

func TestCompileSharesOneCompilationPerSchema(t *testing.T) {
	raw := []byte(`{"type":"object","properties":{"cache_test_a":{"type":"string"}}}`)
	a, err := Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Compile(append([]byte(nil), raw...))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatal("the same schema bytes compiled twice")
	}
	c, err := Compile([]byte(`{"type":"object","properties":{"cache_test_b":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c == a {
		t.Fatal("different schemas share a compilation")
	}
	if err := c.Validate([]byte(`{"cache_test_b":1}`)); err == nil {
		t.Fatal("the cached compilation of the second schema accepted a number for a string")
	}
}

func TestCompileCacheIsBounded(t *testing.T) {
	for i := range cacheSize + 10 {
		if _, err := Compile(fmt.Appendf(nil, `{"type":"integer","minimum":%d}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	compiled.mu.Lock()
	n := len(compiled.m)
	compiled.mu.Unlock()
	if n > cacheSize {
		t.Fatalf("cache holds %d entries; the bound is %d", n, cacheSize)
	}
}

func TestCompileDoesNotCacheFailures(t *testing.T) {
	raw := []byte(`{"type":"no-such-type"}`)
	for range 2 {
		if _, err := Compile(raw); err == nil {
			t.Fatal("an invalid schema compiled")
		}
	}
	compiled.mu.Lock()
	_, ok := compiled.m[digest(raw)]
	compiled.mu.Unlock()
	if ok {
		t.Fatal("a failed compilation was cached")
	}
}
