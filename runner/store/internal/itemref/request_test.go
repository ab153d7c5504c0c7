package itemref

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Resolve puts a request kept by reference back together from its chain,
// whatever each piece shares of the one after it: more, less or as much
// as its referrer needs.
func TestResolve(t *testing.T) {
	root := []byte(`{"input":[m1,m2,m3],"stream":false}`)
	b1 := []byte(`{"input":[m1,m2,m3,m4,m5],"max":1}`)  // shares 15 of root
	b2 := []byte(`{"input":[m1,m2,m3,m4,m5,m6]}`)       // shares 24 of b1
	top := []byte(`{"input":[m1,m2,m7],"stream":true}`) // shares 15 of b2
	chain := []Piece{
		{SharedRequest(top, 15), 15},
		{SharedRequest(b2, 24), 24},
		{SharedRequest(b1, 15), 15},
		{root, 0},
	}
	for i := range chain[:3] {
		got, err := Resolve(chain[i:])
		want := [][]byte{top, b2, b1}[i]
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("Resolve(chain[%d:]) = %s, %v; want %s", i, got, err, want)
		}
	}
	if got, err := Resolve(chain[3:]); err != nil || !bytes.Equal(got, root) {
		t.Fatalf("a whole piece resolves to %s, %v", got, err)
	}
	if _, err := Resolve(chain[:2]); err == nil {
		t.Fatal("a chain without its whole request resolves")
	}
	short := []Piece{chain[2], {root[:10], 0}}
	if _, err := Resolve(short); err == nil {
		t.Fatal("a base shorter than its referrer needs resolves")
	}
}

// Two requests that begin with the same messages hash those prefixes
// alike, whatever follows; the first hash is of the whole input's prefix.
func TestRequestPrefixes(t *testing.T) {
	a := []byte(`{"input":[m1,m2,m3],"stream":false}`)
	b := []byte(`{"input":[m1,m2,m3,m4],"stream":true}`)
	ha, la := RequestPrefixes(a, []int{12, 15, 18})
	hb, lb := RequestPrefixes(b, []int{12, 15, 18, 21})
	if la[0] != 18 || lb[0] != 21 || len(ha) != 3 || len(hb) != 4 {
		t.Fatalf("lengths %v and %v", la, lb)
	}
	if !bytes.Equal(ha[0], hb[1]) || bytes.Equal(ha[0], hb[0]) {
		t.Fatal("the same prefix hashes differently, or a longer one the same")
	}
	if h, _ := RequestPrefixes(a, nil); h != nil {
		t.Fatal("no bounds, yet hashes")
	}
	if h, _ := RequestPrefixes(a, []int{12, 99}); h != nil {
		t.Fatal("a bound past the request, yet hashes")
	}
}

// A session's requests, each its predecessor's input and more, hash
// through the cache as RequestPrefixes does: every hash it returns is the
// uncached one of the same prefix, the first of the whole input, and a
// cached state serves only the same bytes of the same tenant.
func TestRequestCache(t *testing.T) {
	var c RequestCache
	session := func(tenant string, msgs []string, mark byte) (hits int) {
		for turn := 1; turn <= len(msgs); turn++ {
			req := []byte(`{"input":[`)
			var bounds []int
			for i, m := range msgs[:turn] {
				if i > 0 {
					req = append(req, ',')
				}
				req = append(req, m...)
				bounds = append(bounds, len(req))
			}
			req = append(req, `],"turn":`...)
			req = append(req, mark, '}')
			before := c.hits
			got, glens := c.RequestPrefixes(tenant, req, bounds)
			want, wlens := RequestPrefixes(req, bounds)
			if len(got) == 0 || len(got) > len(want) {
				t.Fatalf("turn %d: %d hashes, uncached %d", turn, len(got), len(want))
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) || glens[i] != wlens[i] {
					t.Fatalf("turn %d: hash %d (of %d bytes) is not the uncached one (of %d)", turn, i, glens[i], wlens[i])
				}
			}
			if c.hits > before {
				hits++
			}
			// The same request again: its whole input is cached.
			if again, _ := c.RequestPrefixes(tenant, req, bounds); len(again) != 1 || !bytes.Equal(again[0], want[0]) {
				t.Fatalf("turn %d again: %d hashes", turn, len(again))
			}
		}
		return hits
	}
	msgs := make([]string, 50)
	for i := range msgs {
		msgs[i] = fmt.Sprintf(`{"role":"user","content":"message %d %s"}`, i, strings.Repeat("x", i*37))
	}
	if hits := session("t1", msgs, 'a'); hits != len(msgs)-1 {
		t.Fatalf("a growing session hit the cache %d times of %d", hits, len(msgs)-1)
	}
	// Another tenant's session with the same messages starts cold.
	if hits := session("t2", msgs[:1], 'b'); hits != 0 {
		t.Fatal("a tenant's request found another's cached state")
	}
	// The same lengths and count with other bytes from the fourth message
	// on: the first three are cached, the rest hash as they are (the
	// comparison with the uncached hashes in session).
	other := slices.Clone(msgs)
	other[3] = strings.Replace(other[3], "message", "massage", 1)
	session("t1", other[:6], 'c')
}

// A request that differs from the cached one in a single byte of its
// prefix, the same tenant, length and bounds, is not the cached prefix:
// wherever the byte is (the first, one of the middle, either side of a
// key block's end, the last), the cache does not serve the other
// request's state, and the hashes are the uncached ones. A wrong hit
// would make a stored request read back wrong.
func TestRequestCacheKeysEveryByte(t *testing.T) {
	req := []byte(`{"input":[`)
	var bounds []int
	for i := range 9 {
		if i > 0 {
			req = append(req, ',')
		}
		req = append(req, fmt.Sprintf(`{"role":"user","content":"%d %s"}`, i, strings.Repeat("y", 700))...)
		bounds = append(bounds, len(req))
	}
	req = append(req, `]}`...)
	end := bounds[len(bounds)-1]
	if end%keyBlock == 0 || end < 4*keyBlock {
		t.Fatalf("a %d-byte prefix does not end inside a later block", end)
	}
	for _, at := range []int{0, end / 2, keyBlock - 1, keyBlock, 3*keyBlock + 1, end - 2, end - 1} {
		for _, more := range []bool{false, true} {
			var c RequestCache
			c.RequestPrefixes("t", req, bounds)
			other, obounds := slices.Clone(req), bounds
			other[at] ^= 1
			if more { // the next turn of the other request's session
				other = append(other[:end:end], `,{"role":"assistant","content":"ok"}]}`...)
				obounds = append(slices.Clone(bounds), len(other)-2)
			}
			before := c.hits
			got, _ := c.RequestPrefixes("t", other, obounds)
			if c.hits != before {
				t.Errorf("byte %d of %d changed (another turn: %v): the cached state served", at, end, more)
			}
			want, _ := RequestPrefixes(other, obounds)
			if len(got) != len(want) || !bytes.Equal(got[0], want[0]) {
				t.Errorf("byte %d of %d changed (another turn: %v): not the uncached hashes", at, end, more)
			}
			// The request as cached still hits.
			if c.RequestPrefixes("t", req, bounds); c.hits == before {
				t.Errorf("byte %d: the cached request itself missed", at)
			}
		}
	}
}

// BenchmarkRequestPrefixes hashes a 400-message, 229 KB request's
// prefixes, whole and through the cache after the turn before (the same
// input less its last two messages, or the same request again).
func BenchmarkRequestPrefixes(b *testing.B) {
	var req []byte
	var bounds []int
	req = append(req, `{"input":[`...)
	for i := range 400 {
		if i > 0 {
			req = append(req, ',')
		}
		req = append(req, fmt.Sprintf(`{"role":"user","content":"%s"}`, strings.Repeat("code\n\t", 94))...)
		bounds = append(bounds, len(req))
	}
	req = append(req, `]}`...)
	b.Run("whole", func(b *testing.B) {
		b.SetBytes(int64(len(req)))
		for b.Loop() {
			RequestPrefixes(req, bounds)
		}
	})
	b.Run("cached", func(b *testing.B) {
		b.SetBytes(int64(len(req)))
		for b.Loop() {
			b.StopTimer()
			var c RequestCache
			c.RequestPrefixes("t", req, bounds[:len(bounds)-2])
			b.StartTimer()
			c.RequestPrefixes("t", req, bounds)
		}
	})
	b.Run("again", func(b *testing.B) { // the same request as the turn before
		var c RequestCache
		c.RequestPrefixes("t", req, bounds)
		b.SetBytes(int64(len(req)))
		for b.Loop() {
			c.RequestPrefixes("t", req, bounds)
		}
	})
}

// Sessions of several tenants share a store's cache at once: each hash is
// still the uncached one (run with -race).
func TestRequestCacheConcurrent(t *testing.T) {
	var c RequestCache
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			req := []byte(`{"input":[`)
			var bounds []int
			for i := range 40 {
				if i > 0 {
					req = append(req, ',')
				}
				req = append(req, fmt.Sprintf(`{"role":"user","content":"%d"}`, i%3)...)
				bounds = append(bounds, len(req))
				whole := append(slices.Clone(req), ']', '}')
				got, _ := c.RequestPrefixes(fmt.Sprint("t", g%3), whole, bounds)
				want, _ := RequestPrefixes(whole, bounds)
				if !bytes.Equal(got[0], want[0]) {
					t.Errorf("tenant %d, %d messages: not the uncached hash", g%3, i+1)
					return
				}
			}
		})
	}
	wg.Wait()
}
