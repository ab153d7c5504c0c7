// Package itemref is what both drivers share of keeping each stored item
// once (RATIONALE.md "Each item stored once"). A client that keeps its
// own history (the Agents SDK's sessions, LangChain, the AI SDK) resends
// it whole every turn with store at its default; a response's input then
// begins with the items an earlier response of the tenant already holds.
// The store keeps such a response by reference: its first Base items are
// the first Base items of that earlier response (its base), and only the
// rest are rows of its own. The base is found by the hash of every prefix
// of the input (Prefixes), kept per tenant for each response's input and
// for its input and output together. The items a response shares keep
// the ids the service gave them, which follow from the run and the
// position (runner.InputItemID): Shareable says how many do.
//
// The run's recorded request repeats its input too: a store keeps it
// without the input (Elide) and puts the input items back on read
// (Inflate). The recorded request of a run with no stored response (a
// chat completion, a native run) is kept by reference to an earlier
// run's of the tenant that begins with the same bytes (request.go).
package itemref

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"hash"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// Window is how many prefixes of an input are looked up, the longest
// first: a turn that adds up to Window-1 items to the history it resends
// shares the rest.
const Window = 32

// MinBytes is the least size of an input's stored messages for which a
// base is looked up: below it the lookup costs more than the copy.
const MinBytes = 512

// Hasher hashes a list of stored messages one at a time: after each, Sum
// is the hash of the prefix so far.
type Hasher struct {
	h hash.Hash
	n int
	l [binary.MaxVarintLen64]byte // a length's varint, not an allocation each
}

// NewHasher starts a hash of an empty list.
func NewHasher() *Hasher { return &Hasher{h: sha256.New()} }

// Add appends a stored message.
func (h *Hasher) Add(msg string) {
	h.h.Write(h.l[:binary.PutUvarint(h.l[:], uint64(len(msg)))])
	// Not a copy: a Writer neither modifies nor retains what it is given
	// (io.Writer), and []byte(msg) copied every stored message each turn.
	h.h.Write(unsafe.Slice(unsafe.StringData(msg), len(msg)))
	h.n++
}

// AddBytes appends a message given as bytes, as Add does.
func (h *Hasher) AddBytes(msg []byte) {
	h.h.Write(h.l[:binary.PutUvarint(h.l[:], uint64(len(msg)))])
	h.h.Write(msg)
	h.n++
}

// Len is how many messages were added.
func (h *Hasher) Len() int { return h.n }

// Sum is the hash of the messages added so far.
func (h *Hasher) Sum() []byte { return h.h.Sum(nil) }

// AppendSum appends Sum to b.
func (h *Hasher) AppendSum(b []byte) []byte { return h.h.Sum(b) }

// Prefixes returns the hashes of the input's last Window prefixes, the
// longest first (hashes[k] is of the first lens[k] messages), and the
// hasher after all of them, to be continued with the output (Pending).
func Prefixes(msgs []string) (hashes [][]byte, lens []int, h *Hasher) {
	h = NewHasher()
	first := max(1, len(msgs)-Window+1)
	n := len(msgs) - first + 1
	sums := make([]byte, 0, n*sha256.Size) // one allocation for the hashes
	hashes, lens = make([][]byte, 0, n), make([]int, 0, n)
	for i, m := range msgs {
		h.Add(m)
		if i+1 >= first {
			sums = h.AppendSum(sums)
			hashes = append(hashes, sums[len(sums)-sha256.Size:len(sums):len(sums)])
			lens = append(lens, i+1)
		}
	}
	for i, j := 0, len(hashes)-1; i < j; i, j = i+1, j-1 {
		hashes[i], hashes[j] = hashes[j], hashes[i]
		lens[i], lens[j] = lens[j], lens[i]
	}
	return hashes, lens, h
}

// Worth reports whether an input is worth looking up a base for: two
// items at least, of MinBytes together.
func Worth(msgs []string) bool {
	return len(msgs) >= 2 && Size(msgs) >= MinBytes
}

// Size is the size of stored messages.
func Size(msgs []string) int {
	n := 0
	for _, m := range msgs {
		n += len(m)
	}
	return n
}

// Shareable is how many leading input items of run runID have the ids
// that follow from their position (runner.InputItemID) and are inputs:
// only those may be kept by reference.
func Shareable(runID string, input []runner.Item) int {
	for i, it := range input {
		if it.Output || it.ID != runner.InputItemID(runID, i, it.Message.Role) {
			return i
		}
	}
	return len(input)
}

// InputRun returns the run whose input item id names (runner.InputItemID:
// msg_X_i or rs_X_i is an input item of run_X); ok is false for any other
// id. Whether that run has such an item is the store's to check.
func InputRun(id string) (runID string, ok bool) {
	for _, prefix := range []string{contract.MessagePrefix, contract.ReasoningPrefix} {
		rest, found := strings.CutPrefix(id, prefix)
		j := strings.LastIndexByte(rest, '_')
		if !found || j <= 0 {
			continue
		}
		if n, err := strconv.Atoi(rest[j+1:]); err != nil || n < 0 || strconv.Itoa(n) != rest[j+1:] {
			continue
		}
		return contract.RunPrefix + rest[:j], true
	}
	return "", false
}

// Pending keeps, between a response's first and last writes, the hash of
// its input, so the last write indexes its input and output together (the
// prefix the next turn of a resending client begins with), and its echo,
// which the last write compacts the final object against
// (runner.CompactObject). It is memory only and bounded: a response whose
// entry is gone (another host ended it, the map was full) is found by its
// input's hash alone, and its object keeps the echo's members.
type Pending struct {
	mu sync.Mutex
	m  map[string]pending
}

type pending struct {
	tenant string
	state  []byte
	n      int
	bytes  int // the input's stored messages' size
	echo   []byte
}

// maxPending bounds Pending: that many responses running at once.
const maxPending = 1 << 14

// Put keeps run runID's hash state after its input, of size bytes, and a
// copy of its echo:
// Sum indexes nothing for a response whose input and output are below
// MinBytes together. A later input then shares nothing of it, so a
// session's first small turn is stored once more; every small stored
// response would otherwise pay an index entry.
func (p *Pending) Put(runID, tenant string, h *Hasher, size int, echo []byte) {
	st, err := h.h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = make(map[string]pending)
	}
	if len(p.m) >= maxPending {
		clear(p.m)
	}
	p.m[runID] = pending{tenant, st, h.n, size, bytes.Clone(echo)}
}

// Echo is run runID's echo as Put kept it, nil when it was not kept.
func (p *Pending) Echo(runID string) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[runID].echo
}

// Sum returns run runID's hash of its input followed by msgs, the
// tenant, and how many items that is; ok is false when it was not kept,
// or the input and msgs are below MinBytes together.
// The last write forgets the run (Drop) when it runs.
func (p *Pending) Sum(runID string, msgs []string) (sum []byte, tenant string, n int, ok bool) {
	p.mu.Lock()
	e, ok := p.m[runID]
	p.mu.Unlock()
	if !ok || len(msgs) == 0 {
		return nil, "", 0, false
	}
	size := e.bytes
	for _, m := range msgs {
		size += len(m)
	}
	if size < MinBytes {
		return nil, "", 0, false
	}
	h := NewHasher()
	if h.h.(encoding.BinaryUnmarshaler).UnmarshalBinary(e.state) != nil {
		return nil, "", 0, false
	}
	h.n = e.n
	for _, m := range msgs {
		h.Add(m)
	}
	return h.Sum(), e.tenant, h.n, true
}

// Drop forgets run runID: its last write runs, or its first failed.
func (p *Pending) Drop(runID string) {
	p.mu.Lock()
	delete(p.m, runID)
	p.mu.Unlock()
}

// The recorded request of a run whose input is stored as its response's
// items is kept without it: a header byte (a control byte, which JSON
// never holds raw) then what follows the input array. The request as the
// service recorded it begins with `{"input":[` and the items' stored
// messages joined by commas (runner's recordedJSON and json.Marshal both
// write the field first, and the messages as encodeMessages does).
const (
	elided      = '\x01'
	inputOpen   = `{"input":[`
	inputClosed = ']'
)

// Elide returns request without its input when the input is exactly
// msgs, and whether it was.
func Elide(request []byte, msgs []string) ([]byte, bool) {
	rest, ok := afterInput(request, msgs)
	if !ok {
		return request, false
	}
	out := make([]byte, 0, 1+len(rest))
	return append(append(out, elided), rest...), true
}

// ElidedPrefix is the part of a recorded request that Elide leaves out
// for input msgs.
func ElidedPrefix(msgs []string) string {
	n := len(inputOpen) + 1
	for _, m := range msgs {
		n += len(m) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, inputOpen...)
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m...)
	}
	return string(append(b, inputClosed))
}

func afterInput(request []byte, msgs []string) ([]byte, bool) {
	b, ok := cut(request, inputOpen)
	for i, m := range msgs {
		if !ok {
			return nil, false
		}
		if i > 0 {
			b, ok = cut(b, ",")
		}
		if ok {
			b, ok = cut(b, m)
		}
	}
	if !ok || len(b) == 0 || b[0] != inputClosed {
		return nil, false
	}
	return b[1:], true
}

func cut(b []byte, prefix string) ([]byte, bool) {
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return b, false
	}
	return b[len(prefix):], true
}

// IsElided reports whether a stored request is kept without its input.
func IsElided(stored []byte) bool { return len(stored) > 0 && stored[0] == elided }

// Inflate puts the input (its items' stored messages) back into a request
// Elide kept.
func Inflate(stored []byte, msgs []string) []byte {
	p := ElidedPrefix(msgs)
	out := make([]byte, 0, len(p)+len(stored)-1)
	return append(append(out, p...), stored[1:]...)
}
