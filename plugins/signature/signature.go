// Package signature signs plugins with ed25519 and checks them against the
// keys a host trusts (plugins.trusted_keys), so that a host runs only
// plugins someone it trusts released, whichever way they arrive: the admin
// API or a control plane. A sha256 alone proves only that the bytes are the
// ones named; whoever names them (a compromised control plane, a stolen
// admin token) could name anything.
//
// What is signed is the plugin's sha256 with a fixed prefix,
// "runedge plugin sha256:<64 hex digits>", not the bytes themselves: the
// digest is computed anyway on every path, and the prefix keeps a
// signature from meaning anything to another protocol that uses the key.
//
// Keys are written "ed25519:<base64 of the 32-byte public key>", and
// signatures as the base64 of their 64 bytes, both standard encoding.
package signature

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

const keyPrefix = "ed25519:"

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ErrUntrusted is returned for a plugin with no signature, or none valid
// under a trusted key.
var ErrUntrusted = errors.New("not signed by a trusted key")

// message is what a signature covers.
func message(sha256Hex string) []byte { return []byte("runedge plugin sha256:" + sha256Hex) }

// Sign signs the plugin whose lowercase hex sha256 is sha256Hex.
func Sign(key ed25519.PrivateKey, sha256Hex string) (string, error) {
	if !sha256RE.MatchString(sha256Hex) {
		return "", fmt.Errorf("signature: want a sha256 as 64 lowercase hex digits, got %q", sha256Hex)
	}
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, message(sha256Hex))), nil
}

// Verify checks that sig signs the plugin of digest sha256Hex under one of
// keys. Any failure is ErrUntrusted: which key or why does not help a
// forger, and the message may travel back to a control plane.
func Verify(keys []ed25519.PublicKey, sha256Hex, sig string) error {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(sig))
	if err != nil || len(raw) != ed25519.SignatureSize || !sha256RE.MatchString(sha256Hex) {
		return ErrUntrusted
	}
	for _, k := range keys {
		if ed25519.Verify(k, message(sha256Hex), raw) {
			return nil
		}
	}
	return ErrUntrusted
}

// ParseKey reads a public key written "ed25519:<base64>".
func ParseKey(s string) (ed25519.PublicKey, error) {
	b64, ok := strings.CutPrefix(strings.TrimSpace(s), keyPrefix)
	if !ok {
		return nil, fmt.Errorf("want %s<base64 of 32 bytes>, got %q", keyPrefix, s)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("want %s<base64 of 32 bytes>, got %q", keyPrefix, s)
	}
	return ed25519.PublicKey(raw), nil
}

// ParseKeys reads every key of a configuration list.
func ParseKeys(list []string) ([]ed25519.PublicKey, error) {
	var keys []ed25519.PublicKey
	var errs []error
	for i, s := range list {
		k, err := ParseKey(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("[%d]: %w", i, err))
			continue
		}
		keys = append(keys, k)
	}
	return keys, errors.Join(errs...)
}

// FormatKey writes a public key the way ParseKey reads it.
func FormatKey(k ed25519.PublicKey) string {
	return keyPrefix + base64.StdEncoding.EncodeToString(k)
}
