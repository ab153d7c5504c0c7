package signature

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
)

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestSignVerify: a signature verifies under its key and under no other,
// and for its plugin only.
func TestSignVerify(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	otherPub, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	sig, err := Sign(priv, digest("plugin v1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify([]ed25519.PublicKey{otherPub, pub}, digest("plugin v1"), sig); err != nil {
		t.Fatalf("a good signature: %v", err)
	}
	forged, _ := Sign(otherPriv, digest("plugin v1"))
	for name, c := range map[string]struct {
		keys     []ed25519.PublicKey
		sha, sig string
	}{
		"another plugin":   {[]ed25519.PublicKey{pub}, digest("plugin v2"), sig},
		"untrusted key":    {[]ed25519.PublicKey{pub}, digest("plugin v1"), forged},
		"no keys":          {nil, digest("plugin v1"), sig},
		"no signature":     {[]ed25519.PublicKey{pub}, digest("plugin v1"), ""},
		"not base64":       {[]ed25519.PublicKey{pub}, digest("plugin v1"), "%%%"},
		"truncated":        {[]ed25519.PublicKey{pub}, digest("plugin v1"), sig[:40]},
		"uppercase digest": {[]ed25519.PublicKey{pub}, "A" + digest("plugin v1")[1:], sig},
	} {
		if err := Verify(c.keys, c.sha, c.sig); !errors.Is(err, ErrUntrusted) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestKeys(t *testing.T) {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	got, err := ParseKey(FormatKey(pub))
	if err != nil || !got.Equal(pub) {
		t.Fatalf("round trip: %v", err)
	}
	if _, err := ParseKeys([]string{FormatKey(pub), "ed25519:AAAA", "rsa:xyz"}); err == nil {
		t.Fatal("bad keys accepted")
	}
}

// BenchmarkVerify is the cost a signed plugin adds to a swap or an ECDS
// update; BenchmarkSHA256Plugin, hashing a 4 MiB plugin (the size of the
// default mapping plugin, rounded up), is the digest every path already
// computes, for comparison.
func BenchmarkVerify(b *testing.B) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	d := digest("plugin")
	sig, _ := Sign(priv, d)
	keys := []ed25519.PublicKey{pub}
	for b.Loop() {
		if err := Verify(keys, d, sig); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSHA256Plugin(b *testing.B) {
	wasm := make([]byte, 4<<20)
	b.SetBytes(int64(len(wasm)))
	for b.Loop() {
		sha256.Sum256(wasm)
	}
}
