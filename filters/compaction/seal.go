package compaction

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Key is one sealing key: its id travels in every blob it seals, so the
// fleet can tell which key opens a blob.
type Key struct {
	ID     string
	Secret []byte
}

// sealVersion starts every sealed blob; a blob of another version is not
// one of ours.
const sealVersion = "rc1"

// Errors of Open. Both mean the client's item cannot be trusted; neither
// says more (which byte, which key) than the blob itself does.
var (
	// ErrUnknownKey: the blob names a key this host does not hold (retired,
	// or sealed by another fleet).
	ErrUnknownKey = errors.New("sealed with an unknown key")
	// ErrTampered: the blob is malformed or fails authentication.
	ErrTampered = errors.New("not sealed by this service or altered since")
)

// Keys seals with its first key and opens with any of them, so a fleet
// rotates by putting a new key first and keeping the old ones until the
// items they sealed no longer matter. Safe for concurrent use.
type Keys struct {
	seal  string
	aeads map[string]cipher.AEAD
}

// NewKeys builds the key ring from keys, first one sealing. Each secret
// is hashed to an AES-256 key, so any secret length works; ids must be
// unique, non-empty and free of '.', the blob's separator.
func NewKeys(keys []Key) (*Keys, error) {
	if len(keys) == 0 {
		return nil, errors.New("compaction: no keys")
	}
	k := &Keys{seal: keys[0].ID, aeads: make(map[string]cipher.AEAD, len(keys))}
	for _, key := range keys {
		if key.ID == "" || strings.Contains(key.ID, ".") {
			return nil, fmt.Errorf("compaction: key id %q: want a non-empty id without '.'", key.ID)
		}
		if _, dup := k.aeads[key.ID]; dup {
			return nil, fmt.Errorf("compaction: key id %q is listed twice", key.ID)
		}
		if len(key.Secret) == 0 {
			return nil, fmt.Errorf("compaction: key %q has an empty secret", key.ID)
		}
		sum := sha256.Sum256(key.Secret)
		block, err := aes.NewCipher(sum[:])
		if err != nil {
			return nil, err
		}
		a, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		k.aeads[key.ID] = a
	}
	return k, nil
}

// ProcessKeys returns a ring of one random key that lives as long as the
// process: compaction works without configuration, but an item sealed
// before a restart, or by another host, no longer opens. The key's id is
// random too ("process-" and 8 hex digits), so such an item names a key
// this host does not hold (ErrUnknownKey), which a reasoning item may be
// forgiven, rather than failing authentication as an altered one does.
func ProcessKeys() *Keys {
	secret := make([]byte, 36)
	if _, err := rand.Read(secret); err != nil {
		panic("compaction: no randomness: " + err.Error())
	}
	k, _ := NewKeys([]Key{{ID: fmt.Sprintf("process-%x", secret[32:]), Secret: secret[:32]}})
	return k
}

// Seal returns "rc1.<key id>.<base64url(nonce|ciphertext)>" for tenant.
// The version, the key id and the tenant are authenticated too (GCM's
// additional data), so none can be swapped without Open failing: an item
// opens only for the tenant it was sealed for.
func (k *Keys) Seal(tenant, plain string) string {
	a := k.aeads[k.seal]
	nonce := make([]byte, a.NonceSize(), a.NonceSize()+len(plain)+a.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic("compaction: no randomness: " + err.Error())
	}
	head := sealVersion + "." + k.seal
	out := a.Seal(nonce, nonce, []byte(plain), additional(head, tenant))
	return head + "." + base64.RawURLEncoding.EncodeToString(out)
}

// Open returns what Seal sealed for tenant, ErrUnknownKey or ErrTampered
// (which includes another tenant's item).
func (k *Keys) Open(tenant, blob string) (string, error) {
	version, rest, ok := strings.Cut(blob, ".")
	id, body, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || version != sealVersion {
		return "", ErrTampered
	}
	a, known := k.aeads[id]
	if !known {
		return "", fmt.Errorf("%w (key id %q)", ErrUnknownKey, id)
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(body)
	if err != nil || len(raw) < a.NonceSize() {
		return "", ErrTampered
	}
	plain, err := a.Open(nil, raw[:a.NonceSize()], raw[a.NonceSize():], additional(version+"."+id, tenant))
	if err != nil {
		return "", ErrTampered
	}
	return string(plain), nil
}

// additional is the authenticated, unencrypted part: the blob's head and
// the tenant, NUL-separated (neither holds a NUL).
func additional(head, tenant string) []byte {
	return []byte(head + "\x00" + tenant)
}
