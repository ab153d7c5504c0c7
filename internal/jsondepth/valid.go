package jsondepth

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Valid reports whether b is one JSON value that gjson.Valid accepts (the
// model stage's validity check), nesting no deeper than limit levels as
// Exceeds counts them, in one pass over b. When b is an object, member is
// called for each of its top-level members in order, with the key's
// literal (quotes included) and the value's raw bytes and their offsets in
// b; member returns false to stop the walk, and Valid then reports false.
//
// It is the model stage's three readings of a body (Exceeds, gjson.Valid,
// and gjson's walk of the top level) done in one pass: on an agent's
// history each of them reads every byte. A false answer says nothing
// about why; the caller checks again with those three to find and name
// the fault (FuzzValidMatchesGjson holds the two to the same answer).
func Valid(b []byte, limit int, member func(key, value []byte, keyAt, valueAt int) bool) bool {
	valid, _ := ValidPlain(b, limit, member)
	return valid
}

// ValidPlain is Valid that also reports whether every string of a valid
// b is plain: ASCII only, its escapes one letter other than \/ and \\
// (\" \b \f \n \r \t). Every JSON reader reads such a string alike, and
// its text is its length less one byte a backslash, so that a reader of b may keep
// its strings escaped without reading them again (compat's decoded path,
// RATIONALE.md "Agent-sized bodies"). It is found in the same pass, at
// one OR a word read. FuzzValidMatchesGjson holds it to a byte-at-a-time
// reading.
func ValidPlain(b []byte, limit int, member func(key, value []byte, keyAt, valueAt int) bool) (valid, plain bool) {
	valid, plain, _ = validPlain(validator{b: b, limit: limit}, member)
	return valid, plain
}

// StringMin is the length from which ValidPlainEnds notes where a string
// ends: its quotes included.
const StringMin = 64

// ValidPlainEnds is ValidPlain that also appends to ends, for each string
// value of a valid b that is StringMin bytes or longer (keys are not
// noted), in order, the offset of its opening quote and the offset after
// its closing quote: where a reader of b that walks it again (compat's
// decoded path, through guestjson.StringEnds) finds each long string's end
// without reading it. ends comes back as it was when b is not valid, or
// longer than 4 GiB. FuzzValidMatchesGjson holds the ends to a walk of b.
func ValidPlainEnds(b []byte, limit int, member func(key, value []byte, keyAt, valueAt int) bool, ends []uint32) (valid, plain bool, _ []uint32) {
	v := validator{b: b, limit: limit, ends: ends, record: uint64(len(b)) <= math.MaxUint32}
	valid, plain, got := validPlain(v, member)
	if !valid {
		return false, false, ends
	}
	return valid, plain, got
}

func validPlain(v validator, member func(key, value []byte, keyAt, valueAt int) bool) (valid, plain bool, ends []uint32) {
	b := v.b
	i := v.ws(0)
	if i < len(b) && b[i] == '{' {
		i = v.object(i+1, 1, member)
	} else {
		i = v.value(i, 0)
	}
	if i < 0 || v.ws(i) != len(b) {
		return false, false, nil
	}
	return true, !v.escaped && v.high&highs == 0, v.ends
}

type validator struct {
	b     []byte
	limit int
	// high is the OR of every word and byte a string was read in: a
	// byte from 0x80 on sets a high bit. escaped is set by a \u, \/
	// or \\ escape.
	high    uint64
	escaped bool
	// record: the ends of the long strings are appended to ends
	// (ValidPlainEnds).
	record bool
	ends   []uint32
}

// plain[c] is true for a byte a string holds as it is: not a quote, a
// backslash or a control byte (gjson accepts any other byte, UTF-8 or
// not).
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// shortEscape[c] is true for the escapes \c of one letter that keep a
// string plain (ValidPlain); \/ and \\ are read after the word loop, as
// \u is.
var shortEscape = [256]bool{'"': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true}

// ws skips JSON whitespace from i.
func (v *validator) ws(i int) int {
	for i < len(v.b) {
		switch v.b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value reads the value at i (whitespace before it skipped) of an
// enclosing depth and returns the offset after it, -1 when it is not
// valid or nests too deeply.
func (v *validator) value(i, depth int) int {
	i = v.ws(i)
	if i >= len(v.b) {
		return -1
	}
	switch c := v.b[i]; c {
	case '{':
		return v.object(i+1, depth+1, nil)
	case '[':
		return v.array(i+1, depth+1)
	case '"':
		end := v.strWords(i + 1)
		if end < -1 {
			end = v.str(end)
		}
		if v.record && end-i >= StringMin {
			v.ends = append(v.ends, uint32(i), uint32(end))
		}
		return end
	case 't':
		return v.word(i+1, "rue")
	case 'f':
		return v.word(i+1, "alse")
	case 'n':
		return v.word(i+1, "ull")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return v.number(i)
		}
		return -1
	}
}

func (v *validator) word(i int, rest string) int {
	if len(v.b)-i >= len(rest) && string(v.b[i:i+len(rest)]) == rest {
		return i + len(rest)
	}
	return -1
}

// str reads a string's text from i (after its opening quote) as gjson's
// validstring does: no control byte, only JSON's escapes, and returns the
// offset after its closing quote, -1 when it is not valid. An agent's
// history is mostly text with an escape every dozen bytes (\n \t \"):
// plainWords reads a text's run of words eight bytes at a time, each
// escape of them with the word's masks; strWords reads the rest, a key or
// a short value and a word with any other stop. The two callers call
// strWords first and this only for a run, so that a short string costs
// one call, as it did before plainWords.
func (v *validator) str(j int) int {
	for j < -1 {
		i, h := plainWords(v.b, -2-j)
		v.high |= h
		j = v.strWords(i)
	}
	return j
}

// strWords is str without plainWords, and calls nothing (a leaf needs no
// frame): a word is read stop by stop (exactStops), and from a stop that
// is not a one-letter escape a byte at a time. At a word without a stop,
// at i, it returns -2-i: str reads on from there with plainWords.
func (v *validator) strWords(i int) int {
	b := v.b
	for {
	words:
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			v.high |= w
			// Every stop of the word is marked (exactStops), so the
			// commonest, \n \t \" and the like, are read here without
			// reading the word again after each; the rest below.
			m := exactStops(w)
			if m == 0 {
				return -2 - i
			}
			next := i + 8
			for ; m != 0; m &= m - 1 {
				k := bits.TrailingZeros64(m) >> 3
				j := i + k
				if b[j] != '\\' || j+1 >= len(b) || !shortEscape[b[j+1]] {
					i = j
					break words
				}
				// The escape's letter is no stop (\" closes nothing): its
				// mark goes, and past the word the next read starts after it.
				m &^= 0x80 << (8 * (k + 1))
				next = max(next, j+2)
			}
			i = next
		}
		for i < len(b) && plain[b[i]] {
			v.high |= uint64(b[i])
			i++
		}
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', 'b', 'f', 'n', 'r', 't':
				i++
			case '/', '\\':
				v.escaped = true
				i++
			case 'u':
				v.escaped = true
				for range 4 {
					i++
					if i >= len(b) || !isHex(b[i]) {
						return -1
					}
				}
				i++
			default:
				return -1
			}
		default: // a control byte
			return -1
		}
	}
}

// plainWords reads b from i (inside a string) eight bytes at a time for
// as long as each word holds no stop other than an escape \n \t or \"
// (the commonest; any other is left to strWords): every backslash followed by
// one of those letters (in the word, or as the next word's first byte:
// carry), no control byte, every quote such a letter. It returns where it
// stopped, a word's first byte or the backslash before it when the word
// starts with that backslash's letter, and the OR of the words it took.
// A word without a stop costs one test (about seven in ten of an agent's
// history); only a word with one reads the escapes' masks, with no branch
// per escape, where exactStops' loop took one (or two) per escape.
//
// Each mask is a subtraction's borrow (w^c - ones, at the bytes below
// 0x80): every byte equal to c is marked, and a mark that is not one
// only falls on the byte after a marked one. So the first test misses no
// stop; a quote or control byte marked where there is none only ends the
// run; a false backslash mark lies after a backslash, so it is a letter
// that must be \" \n or \t and is not; and the letter masks are read only
// at a backslash's next byte, which no backslash borrows into (a
// backslash xor '"', 'n' or 't' is neither 0 nor 1). TestPlainWords holds
// it to a byte-at-a-time reading, every byte value at every place.
func plainWords(b []byte, i int) (int, uint64) {
	var high, carry uint64
	for ; i < len(b)-7; i += 8 {
		w := binary.LittleEndian.Uint64(b[i : i+8 : i+8])
		nw := ^w & highs // bytes below 0x80: only they are marked
		q := w ^ ones*'"' - ones
		bs := w ^ ones*'\\' - ones
		ctl := w - ones*0x20
		if (q|bs|ctl)&nw|carry != 0 {
			bs &= nw
			l := bs<<8 | carry
			ok := q | (w ^ ones*'n' - ones) | (w ^ ones*'t' - ones)
			if (q&^l|ctl|l&^ok)&nw|l&w != 0 {
				break
			}
			carry = bs >> 56
		}
		high |= w
	}
	return i - int(carry>>7), high
}

// Masks of eight bytes read as one little-endian word, byte k in bits
// 8k to 8k+7.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// exactStops returns a mask of the high bits of w's bytes that are a
// quote, a backslash or a control byte (below 0x20), each of them and no
// other: a byte's sum stays in its byte, so no borrow or carry marks the
// bytes after it (stops marks only the first exactly).
func exactStops(w uint64) uint64 {
	const lows = ones * 0x7f
	q := w ^ ones*'"'
	bs := w ^ ones*'\\'
	return ^(((q & lows) + lows | q) & (((bs & lows) + lows) | bs) & (((w & lows) + ones*0x60) | w)) & highs
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number reads a number from i as gjson's validnumber does: JSON's
// grammar, whatever byte follows it (the caller's next read refuses a
// wrong one).
func (v *validator) number(i int) int {
	b := v.b
	digits := func(i int) int {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b) || b[i] < '0' || b[i] > '9':
		return -1
	case b[i] == '0':
		i++
	default:
		i = digits(i)
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return -1
		}
		i = digits(i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return -1
		}
		i = digits(i)
	}
	return i
}

// object reads an object's members from i (after its brace), at depth;
// member, when not nil, is called for each of them.
func (v *validator) object(i, depth int, member func(key, value []byte, keyAt, valueAt int) bool) int {
	if depth > v.limit {
		return -1
	}
	b := v.b
	i = v.ws(i)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		k := i
		if i = v.strWords(i + 1); i < 0 {
			if i = v.str(i); i < 0 {
				return -1
			}
		}
		ke := i
		if i = v.ws(i); i >= len(b) || b[i] != ':' {
			return -1
		}
		at := v.ws(i + 1)
		if i = v.value(at, depth); i < 0 {
			return -1
		}
		if member != nil && !member(b[k:ke], b[at:i], k, at) {
			return -1
		}
		if i = v.ws(i); i >= len(b) {
			return -1
		}
		switch b[i] {
		case '}':
			return i + 1
		case ',':
			i = v.ws(i + 1)
		default:
			return -1
		}
	}
}

// array reads an array's values from i (after its bracket), at depth.
func (v *validator) array(i, depth int) int {
	if depth > v.limit {
		return -1
	}
	b := v.b
	i = v.ws(i)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		if i = v.value(i, depth); i < 0 {
			return -1
		}
		if i = v.ws(i); i >= len(b) {
			return -1
		}
		switch b[i] {
		case ']':
			return i + 1
		case ',':
			i++
		default:
			return -1
		}
	}
}
