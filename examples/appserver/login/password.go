package login

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// DefaultIterations is the PBKDF2-HMAC-SHA256 work factor for new hashes,
// the figure OWASP recommends for this hash. The count is stored in each
// hash, so it can be raised later without invalidating existing users.
const DefaultIterations = 600_000

// hashPrefix names the scheme, so a file can move to another one later.
const hashPrefix = "pbkdf2-sha256"

const (
	saltBytes = 16
	keyBytes  = 32
)

var b64 = base64.RawStdEncoding

// HashPassword returns "pbkdf2-sha256$<iterations>$<salt>$<key>" for
// password, with a fresh random salt. It uses crypto/pbkdf2 from the
// standard library so that the example needs no dependency beyond Go.
func HashPassword(password string, iterations int) (string, error) {
	if iterations < 1 {
		return "", errors.New("iterations must be positive")
	}
	salt := make([]byte, saltBytes)
	rand.Read(salt) // never fails (crypto/rand)
	key, err := pbkdf2.Key(sha256.New, password, salt, iterations, keyBytes)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s$%d$%s$%s", hashPrefix, iterations, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// passwordHash is a parsed hash.
type passwordHash struct {
	iterations int
	salt, key  []byte
}

// parseHash reads a hash written by HashPassword.
func parseHash(s string) (passwordHash, error) {
	parts := strings.Split(s, "$")
	if len(parts) != 4 || parts[0] != hashPrefix {
		return passwordHash{}, fmt.Errorf("want %s$<iterations>$<salt>$<key>", hashPrefix)
	}
	var h passwordHash
	var err error
	if h.iterations, err = strconv.Atoi(parts[1]); err != nil || h.iterations < 1 {
		return passwordHash{}, errors.New("iterations must be a positive number")
	}
	if h.salt, err = b64.DecodeString(parts[2]); err != nil || len(h.salt) < 8 {
		return passwordHash{}, errors.New("salt must be at least 8 bytes of unpadded base64")
	}
	if h.key, err = b64.DecodeString(parts[3]); err != nil || len(h.key) < 16 {
		return passwordHash{}, errors.New("key must be at least 16 bytes of unpadded base64")
	}
	return h, nil
}

// matches derives the key for password and compares it in constant time.
func (h passwordHash) matches(password string) bool {
	key, err := pbkdf2.Key(sha256.New, password, h.salt, h.iterations, len(h.key))
	return err == nil && subtle.ConstantTimeCompare(key, h.key) == 1
}
