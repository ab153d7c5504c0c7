package itemref

import (
	"crypto/sha256"
	"errors"

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
