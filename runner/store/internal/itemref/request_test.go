package itemref

import (
	"bytes"
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
