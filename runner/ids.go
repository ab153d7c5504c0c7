package runner

import (
	"crypto/rand"
	"strings"
)

// NewID returns prefix followed by at least 128 random bits in lowercase
// base32 without padding (26 characters today).
//
// Ids are unguessable on purpose: a run, session or thread id is all a
// client needs to continue or read a conversation, so it must not be
// enumerable. Lowercase base32 keeps ids URL-safe and case-insensitive,
// which matters for ids that travel in headers and paths.
func NewID(prefix string) string {
	return prefix + strings.ToLower(rand.Text())
}
