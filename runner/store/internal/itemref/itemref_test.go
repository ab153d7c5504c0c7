package itemref

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/runedge/runedge/runner"
)

// A request kept without its input reads back byte for byte, and only a
// request whose input is exactly the items is kept so.
func TestElideInflate(t *testing.T) {
	in := []runner.Message{{Role: "user", Content: "ça <va> \"bien\""}, {Role: "assistant", Content: "x"}}
	req, err := json.Marshal(runner.Request{Input: in, Instructions: "be brief", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	msgs := make([]string, len(in))
	for i, m := range in {
		b, _ := json.Marshal(m)
		msgs[i] = string(b)
	}
	kept, ok := Elide(req, msgs)
	if !ok || !IsElided(kept) || len(kept) >= len(req)-len(msgs[0]) {
		t.Fatalf("Elide = %q, %v", kept, ok)
	}
	if got := Inflate(kept, msgs); !bytes.Equal(got, req) {
		t.Fatalf("Inflate = %s, want %s", got, req)
	}
	for _, other := range [][]string{msgs[:1], {msgs[1], msgs[0]}, append(msgs, msgs[0]), nil} {
		if b, ok := Elide(req, other); ok || !bytes.Equal(b, req) {
			t.Fatalf("Elide with other items %q = %q, %v", other, b, ok)
		}
	}
	if IsElided(req) {
		t.Fatal("a request as recorded reads as elided")
	}
}

func TestInputRun(t *testing.T) {
	for id, want := range map[string]string{
		runner.InputItemID("run_abc", 3, "user"):               "run_abc",
		runner.InputItemID("run_abc", 0, runner.RoleReasoning): "run_abc",
		"msg_abc":    "",
		"msg_abc_x":  "",
		"msg_abc_01": "",
		"fc_abc_1":   "",
		"msg__1":     "",
	} {
		got, ok := InputRun(id)
		if got != want || ok != (want != "") {
			t.Errorf("InputRun(%q) = %q, %v; want %q", id, got, ok, want)
		}
	}
}

// Prefixes are the longest first, and a list that begins with another
// has that list's hash among its prefixes.
func TestPrefixes(t *testing.T) {
	msgs := []string{"a", "b", "c"}
	hashes, lens, h := Prefixes(msgs)
	if len(hashes) != 3 || lens[0] != 3 || lens[2] != 1 || h.Len() != 3 {
		t.Fatalf("Prefixes: %d hashes, lens %v", len(hashes), lens)
	}
	short, _, _ := Prefixes(msgs[:2])
	if !bytes.Equal(short[0], hashes[1]) {
		t.Fatal("the hash of a list is not its extension's prefix hash")
	}
	// Lengths are part of the hash: "ab" is not "a","b".
	joined, _, _ := Prefixes([]string{"ab"})
	if bytes.Equal(joined[0], short[0]) {
		t.Fatal("two messages hash as their concatenation")
	}
	var p Pending
	_, _, h1 := Prefixes(msgs[:2])
	p.Put("run_x", "t", h1, MinBytes, []byte(`{"k":1}`))
	if e := p.Echo("run_x"); string(e) != `{"k":1}` {
		t.Fatalf("Pending.Echo = %q", e)
	}
	sum, tenant, n, ok := p.Sum("run_x", msgs[2:])
	if !ok || tenant != "t" || n != 3 || !bytes.Equal(sum, hashes[0]) {
		t.Fatalf("Pending.Sum = %x %q %d %v", sum, tenant, n, ok)
	}
	// A response too small to begin a later input worth a lookup is not
	// indexed.
	p.Put("run_y", "t", h1, 2, nil)
	if _, _, _, ok := p.Sum("run_y", msgs[2:]); ok {
		t.Fatal("a response of 3 bytes is indexed")
	}
}

// BenchmarkPrefixes hashes the prefixes of a 400-item, 229 KB input.
func BenchmarkPrefixes(b *testing.B) {
	msgs := make([]string, 400)
	size := 0
	for i := range msgs {
		msgs[i] = fmt.Sprintf(`{"role":"user","content":"%d %s"}`, i, strings.Repeat("code\n\t", 94))
		size += len(msgs[i])
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		Prefixes(msgs)
	}
}

// Prefixes hashes each prefix as the length-delimited concatenation of
// its messages, the longest first, the last Window of them.
func TestPrefixesReference(t *testing.T) {
	msgs := make([]string, Window+5)
	for i := range msgs {
		msgs[i] = fmt.Sprintf(`{"role":"user","content":"%d %s"}`, i, strings.Repeat("é\n", i*13))
	}
	hashes, lens, _ := Prefixes(msgs)
	if len(hashes) != Window || lens[0] != len(msgs) || lens[Window-1] != len(msgs)-Window+1 {
		t.Fatalf("%d hashes, lengths %v", len(hashes), lens)
	}
	for k, n := range lens {
		var b []byte
		for _, m := range msgs[:n] {
			b = binary.AppendUvarint(b, uint64(len(m)))
			b = append(b, m...)
		}
		if want := sha256.Sum256(b); !bytes.Equal(hashes[k], want[:]) {
			t.Fatalf("the hash of the first %d messages is not theirs", n)
		}
	}
}
