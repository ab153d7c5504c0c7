package guestjson

import (
	"sort"
	"unsafe"
)

// StringEnds is where a document's long strings end, as a reader of the
// whole document found them already: the host's model stage validates a
// body in one pass (jsondepth.ValidPlainEnds) and notes, for each string
// value of some length, the offset of its opening quote and the offset
// after its closing quote. A walk of the document or of a value in it
// (MembersEnds, ObjectElementsEnds) then jumps over such a string where it
// would read it for its closing quote (IndexByte from quote to quote: on
// an agent's history, whose texts have an escaped quote or a newline
// every dozen bytes, the mapping's walks were a third of its CPU;
// RATIONALE.md "Agent-sized bodies").
//
// The offsets must be those of doc's own bytes: a StringEnds of another
// document makes a walk read other values. A jump lands only on a quote,
// inside the value walked, so a wrong StringEnds cannot make a walk panic
// or loop, only read less or more, as malformed input does.
type StringEnds struct {
	doc string
	at  []uint32 // pairs: opening quote, after the closing quote; in order
}

// NewStringEnds returns the ends at (pairs of offsets into doc, as
// jsondepth.ValidPlainEnds appends them) of doc's strings, nil when at is
// empty. doc is not copied.
func NewStringEnds(doc []byte, at []uint32) *StringEnds {
	if len(at) < 2 || len(doc) == 0 {
		return nil
	}
	return &StringEnds{doc: View(doc), at: at[:len(at)&^1]}
}

// ends is a walk's place in a StringEnds: at[k:] are the pairs from its
// position on, their offsets less base in the string walked. (An index,
// not a slice that shrinks: a walk's ends may be on the heap, where
// writing a slice costs the collector's write barrier.)
type ends struct {
	at   []uint32
	k    int
	base int
}

// from returns the pairs of e from v on, and false when v is not in e's
// document (or e is nil).
func (e *StringEnds) from(v Value) (ends, bool) {
	if e == nil || len(v) == 0 {
		return ends{}, false
	}
	base := int(uintptr(unsafe.Pointer(unsafe.StringData(string(v)))) - uintptr(unsafe.Pointer(unsafe.StringData(e.doc))))
	if base < 0 || base > len(e.doc)-len(v) {
		return ends{}, false
	}
	k := sort.Search(len(e.at)/2, func(k int) bool { return int(e.at[2*k]) >= base })
	return ends{at: e.at, k: 2 * k, base: base}, true
}

// skip returns the end of the string whose opening quote is s[i] when the
// pairs know it, -1 otherwise. Walks read strings in order, so the pairs
// before i are dropped as they are passed.
func (c *ends) skip(s string, i int) int {
	p := i + c.base
	k, at := c.k, c.at
	for k+1 < len(at) && int(at[k]) < p {
		k += 2
	}
	if k+1 >= len(at) || int(at[k]) != p {
		c.k = k
		return -1
	}
	c.k = k + 2
	if end := int(at[k+1]) - c.base; end > i+1 && end <= len(s) && s[end-1] == '"' {
		return end
	}
	return -1
}
