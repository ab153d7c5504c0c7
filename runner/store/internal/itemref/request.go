package itemref

import (
	"crypto/sha256"
	"encoding"
	"errors"
	"hash/maphash"
	"sync"

	"github.com/runedge/runedge/runner"
)

// A client that keeps its own session (a coding agent, any chat client)
// resends its history every turn, and the run records it whole
// (Run.Request): a 229 KB request, written, logged and checkpointed again
// every turn. The recorded request is the service's own serialization,
// so its first k input messages are the same bytes in every request that
// begins with them (`{"input":[m1,...,mk`, whatever the client's
// formatting). A store keeps a request that begins with what an earlier
// run of its tenant recorded by reference: the base run, how many bytes
// it shares with it, and the rest (SharedRequest). The base is found by
// hash: each request of runner.SharedRequestMin bytes or more indexes the
// hash of its whole input's prefix (RequestPrefixes' first), and a new
// one looks up the hashes of its last Window prefixes, the longest first.
// A chain of references is at most RequestDepth rows: a request whose
// base is that deep is kept whole, and starts a new chain.

// RequestDepth bounds a chain of references: a request is read from at
// most this many rows, and one in so many of a session's is kept whole.
const RequestDepth = 16

// sharedMark is the first byte of a request kept by reference (a control
// byte, which JSON never holds raw; elided is another).
const sharedMark = '\x02'

// RequestPrefixes returns the hashes of request's prefixes that end at
// its last Window bounds (runner.Run.RequestBounds), the longest first,
// and their lengths: hashes[0] is of its whole input's prefix, which the
// run indexes for the runs after it. None without bounds.
func RequestPrefixes(request []byte, bounds []int) (hashes [][]byte, lens []int) {
	if len(bounds) == 0 || bounds[len(bounds)-1] > len(request) {
		return nil, nil
	}
	h := NewHasher()
	first := max(0, len(bounds)-Window)
	n := len(bounds) - first
	sums := make([]byte, 0, n*sha256.Size) // one allocation for the hashes
	hashes, lens = make([][]byte, 0, n), make([]int, 0, n)
	at := 0
	for i, b := range bounds {
		if b < at {
			return nil, nil
		}
		h.AddBytes(request[at:b])
		at = b
		if i >= first {
			sums = h.AppendSum(sums)
			hashes = append(hashes, sums[len(sums)-sha256.Size:len(sums):len(sums)])
			lens = append(lens, b)
		}
	}
	for i, j := 0, len(hashes)-1; i < j; i, j = i+1, j-1 {
		hashes[i], hashes[j] = hashes[j], hashes[i]
		lens[i], lens[j] = lens[j], lens[i]
	}
	return hashes, lens
}

// SharedRequest is the stored form of request when its first n bytes are
// its base's: a header byte, then the rest.
func SharedRequest(request []byte, n int) []byte {
	out := make([]byte, 0, 1+len(request)-n)
	return append(append(out, sharedMark), request[n:]...)
}

// IsShared reports whether a stored request is kept by reference.
func IsShared(stored []byte) bool { return len(stored) > 0 && stored[0] == sharedMark }

// Piece is one row of a chain of references: a stored request and, when
// it is kept by reference (IsShared), how many bytes it takes from its
// base, the next piece.
type Piece struct {
	Stored []byte
	Shared int
}

// errBrokenChain: a chain that does not end in a whole request, or a
// piece shorter than its referrer needs. The store's writes never leave
// one (a base is materialized in its referrers before it goes).
var errBrokenChain = errors.New("a recorded request's chain of references is broken")

// Resolve returns the request that chain (a run's piece first, then its
// base's, and so on to a whole request) stores, byte for byte. Each byte
// is copied once. A run's piece that is whole (written so since it was
// read) is its request.
func Resolve(chain []Piece) ([]byte, error) {
	if len(chain) == 0 {
		return nil, errBrokenChain
	}
	if !IsShared(chain[0].Stored) {
		return chain[0].Stored, nil
	}
	need := chain[0].Shared + len(chain[0].Stored) - 1
	out := make([]byte, need)
	for _, p := range chain {
		if !IsShared(p.Stored) {
			if len(p.Stored) < need {
				return nil, errBrokenChain
			}
			copy(out[:need], p.Stored)
			return out, nil
		}
		own := p.Stored[1:]
		if need > p.Shared {
			if len(own) < need-p.Shared {
				return nil, errBrokenChain
			}
			copy(out[p.Shared:need], own)
			need = p.Shared
		}
	}
	return nil, errBrokenChain
}

// SharesRequest reports whether run r's recorded request may be kept by
// reference: it has bounds (runner.Run.RequestBounds) and, as stored
// (elided or not), is the request they were taken of.
func SharesRequest(r *runner.Run, stored []byte) bool {
	return len(r.RequestBounds) > 0 && len(stored) == len(r.Request) && len(stored) >= runner.SharedRequestMin
}

// RequestCache keeps the SHA-256 state at the end of each recent
// request's whole input (its last bound), so the next request of a
// resending session hashes what it adds, not its whole history again
// (RATIONALE.md "Agent-sized bodies"). A prefix is found by a 128-bit
// seeded hash of its bytes (two maphash chains, random seeds per process,
// an order of magnitude cheaper than SHA-256), its tenant, its length and
// its number of messages: a prefix only the same bytes give, but for a
// collision of both chains at once. It is memory only and bounded (at
// most maxRequestCache states of about 200 bytes); its zero value is
// ready to use.
type RequestCache struct {
	once   sync.Once
	s1, s2 maphash.Seed
	mu     sync.Mutex
	m      map[requestKey][]byte // a marshaled SHA-256 state
	hits   int                   // for tests
}

type requestKey struct {
	tenant     string
	n, bounds  int
	sum1, sum2 uint64
}

// maxRequestCache bounds a RequestCache: that many sessions' last turns.
const maxRequestCache = 1 << 12

// RequestPrefixes is RequestPrefixes of request and bounds, for a request
// of tenant, starting from the longest prefix the cache holds the state
// of: of the last Window prefixes, it returns those from that one on (the
// longest first, as ever; hashes[0] is of the whole input's prefix). An
// earlier request of the tenant had that prefix as its whole input, and
// its row indexes it, so the shorter ones would find no better base; when
// that row is gone (deleted, purged, its write failed), the request finds
// a base among the longer ones or is kept whole, as a new session's is.
func (c *RequestCache) RequestPrefixes(tenant string, request []byte, bounds []int) (hashes [][]byte, lens []int) {
	if len(bounds) == 0 || bounds[len(bounds)-1] > len(request) {
		return nil, nil
	}
	c.once.Do(func() { c.s1, c.s2 = maphash.MakeSeed(), maphash.MakeSeed() })
	sums := make([][2]uint64, len(bounds))
	var k1, k2 uint64
	at := 0
	for i, b := range bounds {
		if b < at {
			return nil, nil
		}
		seg := request[at:b]
		k1 = maphash.Comparable(c.s1, [3]uint64{k1, maphash.Bytes(c.s1, seg), uint64(len(seg))})
		k2 = maphash.Comparable(c.s2, [3]uint64{k2, maphash.Bytes(c.s2, seg), uint64(len(seg))})
		sums[i] = [2]uint64{k1, k2}
		at = b
	}
	key := func(i int) requestKey { return requestKey{tenant, bounds[i], i + 1, sums[i][0], sums[i][1]} }
	from, state := -1, []byte(nil) // the longest prefix cached, its state
	c.mu.Lock()
	for i := len(bounds) - 1; i >= 0 && c.m != nil; i-- {
		if st, ok := c.m[key(i)]; ok {
			from, state = i, st
			c.hits++
			break
		}
	}
	c.mu.Unlock()
	h := NewHasher()
	at = 0
	if from >= 0 {
		if h.h.(encoding.BinaryUnmarshaler).UnmarshalBinary(state) != nil {
			return RequestPrefixes(request, bounds)
		}
		at = bounds[from]
	}
	first := max(0, len(bounds)-Window, from)
	n := len(bounds) - first
	out := make([]byte, 0, n*sha256.Size) // one allocation for the hashes
	hashes, lens = make([][]byte, 0, n), make([]int, 0, n)
	if from >= first {
		out = h.AppendSum(out)
		hashes = append(hashes, out[:sha256.Size:sha256.Size])
		lens = append(lens, bounds[from])
	}
	for i := from + 1; i < len(bounds); i++ {
		h.AddBytes(request[at:bounds[i]])
		at = bounds[i]
		if i >= first {
			out = h.AppendSum(out)
			hashes = append(hashes, out[len(out)-sha256.Size:len(out):len(out)])
			lens = append(lens, bounds[i])
		}
	}
	for i, j := 0, len(hashes)-1; i < j; i, j = i+1, j-1 {
		hashes[i], hashes[j] = hashes[j], hashes[i]
		lens[i], lens[j] = lens[j], lens[i]
	}
	if from == len(bounds)-1 {
		return hashes, lens
	}
	st, err := h.h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return hashes, lens
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxRequestCache {
		c.m = make(map[requestKey][]byte)
	}
	c.m[key(len(bounds)-1)] = st
	c.mu.Unlock()
	return hashes, lens
}
