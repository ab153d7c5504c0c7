package runner

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"time"
)

// idEncoding is base32 with the "extended hex" alphabet, lowercased: its
// characters sort in the order of the bits they encode, so ids sort by
// their time prefix.
var idEncoding = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)

// NewID returns prefix followed by 32 characters: the creation time in
// milliseconds (48 bits) then 112 random bits, in lowercase base32 with
// the extended-hex alphabet (0-9, a-v).
//
// Ids are unguessable on purpose: a run, session or thread id is all a
// client needs to continue or read a conversation, so it must not be
// enumerable; 112 random bits are well past DESIGN's 96. Lowercase base32
// keeps ids URL-safe and case-insensitive, which matters for ids that
// travel in headers and paths.
//
// The time prefix makes ids made later sort after ids made earlier, so the
// store's indexes on ids (run, session, thread, response item) take new
// keys at their right edge: one page per group commit instead of one
// random page per run, and an index that stays in cache as the history
// grows (RATIONALE.md "Fewer, ordered pages per run"). The prefix shows
// when the id was made, which the objects it names show anyway
// (created_at).
func NewID(prefix string) string {
	var b [20]byte
	ms := uint64(time.Now().UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	rand.Read(b[6:]) // never fails (crypto/rand)
	out := make([]byte, len(prefix)+idEncoding.EncodedLen(len(b)))
	copy(out, prefix)
	idEncoding.Encode(out[len(prefix):], b[:])
	return string(out)
}
