package itemref

import (
	"crypto/sha256"
	"encoding"
	"errors"
	"hash/maphash"
	"sync"
	"unsafe"

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
// seeded hash of its bytes (two prefixKeys, random seeds per process,
// an order of magnitude cheaper than SHA-256), its tenant, its length and
// its number of messages: a prefix only the same bytes give, but for a
// collision of both keys at once. The map is keyed by the first key; the
// second, checked on a hit only, is stored beside the state. It is memory
// only and bounded (at most maxRequestCache states of about 200 bytes);
// its zero value is ready to use.
type RequestCache struct {
	once   sync.Once
	s1, s2 maphash.Seed
	mu     sync.Mutex
	m      map[requestKey]cachedState
	hits   int // for tests
}

type requestKey struct {
	tenant    string
	n, bounds int
	sum1      uint64
}

type cachedState struct {
	sum2  uint64
	state []byte // a marshaled SHA-256 state
}

// maxRequestCache bounds a RequestCache: that many sessions' last turns.
const maxRequestCache = 1 << 12

// keyBlock is the stride of a prefixKey's chain. Each block is hashed in
// one call of the runtime's map hash (maphash.Comparable of a string
// runs aeshash over all of it; maphash.Bytes calls it every 128 bytes,
// a quarter of the speed), and a prefix's key adds the hash of its last,
// partial block: a prefix that ends anywhere costs at most one block
// more than the chain.
const keyBlock = 1 << 10

// prefixKeys is a seeded hash of every prefix of a request, chained over
// keyBlock-byte blocks at fixed offsets: the key of request[:n] depends
// on those n bytes and the seed only, whatever follows them.
type prefixKeys struct {
	seed    maphash.Seed
	request []byte
	chain   []uint64 // chain[j]: of request[:j*keyBlock]
}

// extend chains the blocks that end at or before n.
func (p *prefixKeys) extend(n int) {
	if len(p.chain) == 0 {
		p.chain = append(p.chain, 0)
	}
	for j := len(p.chain); j*keyBlock <= n; j++ {
		block := p.request[(j-1)*keyBlock : j*keyBlock]
		p.chain = append(p.chain, maphash.Comparable(p.seed, [2]uint64{p.chain[j-1], hashString(p.seed, block)}))
	}
}

// key returns the key of request[:n].
func (p *prefixKeys) key(n int) uint64 {
	p.extend(n)
	j := n / keyBlock
	return maphash.Comparable(p.seed, [3]uint64{p.chain[j], hashString(p.seed, p.request[j*keyBlock:n]), uint64(n)})
}

// hashString hashes b as a string, in one pass (keyBlock), without a copy:
// the hash keeps nothing of it.
func hashString(seed maphash.Seed, b []byte) uint64 {
	return maphash.Comparable(seed, unsafe.String(unsafe.SliceData(b), len(b)))
}

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
	for i, b := range bounds {
		if b < 0 || i > 0 && b < bounds[i-1] {
			return nil, nil
		}
	}
	c.once.Do(func() { c.s1, c.s2 = maphash.MakeSeed(), maphash.MakeSeed() })
	k1 := prefixKeys{seed: c.s1, request: request, chain: make([]uint64, 0, bounds[len(bounds)-1]/keyBlock+1)}
	k2 := prefixKeys{seed: c.s2, request: request, chain: make([]uint64, 0, cap(k1.chain))}
	key := func(i int) requestKey { return requestKey{tenant, bounds[i], i + 1, k1.key(bounds[i])} }
	from, state := -1, []byte(nil) // the longest prefix cached, its state
	for i := len(bounds) - 1; i >= 0; i-- {
		k := key(i)
		c.mu.Lock()
		st, ok := c.m[k]
		c.mu.Unlock()
		if ok && st.sum2 == k2.key(bounds[i]) {
			from, state = i, st.state
			c.mu.Lock()
			c.hits++
			c.mu.Unlock()
			break
		}
	}
	h := NewHasher()
	at := 0
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
	last := len(bounds) - 1
	k, sum2 := key(last), k2.key(bounds[last])
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxRequestCache {
		c.m = make(map[requestKey]cachedState)
	}
	c.m[k] = cachedState{sum2, st}
	c.mu.Unlock()
	return hashes, lens
}
