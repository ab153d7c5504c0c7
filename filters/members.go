package filters

import (
	"unsafe"

	"github.com/tidwall/gjson"
)

// members is a body's top level as the model stage read it (SetMembers),
// for the body of that data and length only.
type members struct {
	at   *byte
	n    int
	list []member
	// plain: every string of the body is plain (SetPlainStrings).
	plain bool
	// ends: where the body's long strings end (SetStringEnds).
	ends []uint32
}

type member struct {
	key string // unescaped
	raw string // the value, in place
	at  int    // its offset in the body
}

// SetMembers records the top-level members of x.Body as read gives them
// to add: each key (unescaped), its value's raw bytes in place and their
// offset in the body. read reports whether it read the whole body and
// found an object, valid, without a key twice; nothing is recorded
// otherwise. The model stage calls it, so that the stages after it read
// a member (Member) without walking the body again: on an agent's 230 KB
// history each gjson.GetBytes of a member the body lacks reads every
// byte of it.
func (x *Exchange) SetMembers(read func(add func(key, raw string, at int)) bool) {
	m := members{at: unsafe.SliceData(x.Body), n: len(x.Body), list: make([]member, 0, 8)}
	if read(func(key, raw string, at int) { m.list = append(m.list, member{key, raw, at}) }) {
		x.members = m
	}
}

// SetPlainStrings records that every string of the body whose members
// SetMembers recorded is plain (jsondepth.ValidPlain: ASCII, one-letter
// escapes other than \/); the model stage calls it after SetMembers.
func (x *Exchange) SetPlainStrings() {
	if x.members.at != nil {
		x.members.plain = true
	}
}

// SetStringEnds records where the long strings of the body whose members
// SetMembers recorded end (jsondepth.ValidPlainEnds: the offsets of each
// one's opening quote and after its closing quote); the model stage calls
// it after SetMembers.
func (x *Exchange) SetStringEnds(ends []uint32) {
	if x.members.at != nil {
		x.members.ends = ends
	}
}

// StringEnds returns what SetStringEnds recorded, while x.Body is still
// the body it was found in, nil otherwise: the mapping then walks the
// body without reading its long strings for their ends.
func (x *Exchange) StringEnds() []uint32 {
	if !x.readBody() {
		return nil
	}
	return x.members.ends
}

// PlainStrings reports whether the model stage found every string of
// x.Body plain (SetPlainStrings), while x.Body is still the body it read:
// the mapping then keeps the texts escaped without reading them again.
func (x *Exchange) PlainStrings() bool {
	return x.members.plain && x.readBody()
}

// readBody reports whether x.Body is still the body whose members
// SetMembers recorded: what the model stage found in it holds only then.
func (x *Exchange) readBody() bool {
	return x.members.at != nil && x.members.at == unsafe.SliceData(x.Body) && x.members.n == len(x.Body)
}

// Member is gjson.GetBytes(x.Body, name) for a name without gjson's path
// syntax (a top-level key as it is spelled): the member's value, or the
// zero Result when the body has none. Read from what SetMembers recorded
// while x.Body is still that body, in place (a Result sharing the body's
// memory, which no stage writes into); from the body otherwise.
func (x *Exchange) Member(name string) gjson.Result {
	if !x.readBody() {
		return gjson.GetBytes(x.Body, name)
	}
	for _, m := range x.members.list {
		if m.key == name {
			v := gjson.Parse(m.raw)
			v.Index = m.at
			return v
		}
	}
	return gjson.Result{}
}

// DropBody lets the body go: x.Body and the members SetMembers recorded,
// whose values point into it. The run stage calls it once the body is
// mapped, so that a run that outlives its request (a background run
// waiting on its upstream) does not keep the client's body alive through
// them.
func (x *Exchange) DropBody() {
	x.Body = nil
	x.members = members{}
}
