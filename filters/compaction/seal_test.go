package compaction

import (
	"errors"
	"strings"
	"testing"
)

func ring(t *testing.T, ids ...string) *Keys {
	t.Helper()
	var keys []Key
	for _, id := range ids {
		keys = append(keys, Key{ID: id, Secret: []byte("secret " + id)})
	}
	k, err := NewKeys(keys)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Sealed text opens with the same ring and with a ring that holds the key
// among others; the blob names its key and hides the text; each seal is
// different (a fresh nonce).
func TestSealOpen(t *testing.T) {
	a := ring(t, "a")
	blob := a.Seal("t1", "the summary")
	if !strings.HasPrefix(blob, "rc1.a.") || strings.Contains(blob, "summary") {
		t.Fatalf("blob %q", blob)
	}
	if blob == a.Seal("t1", "the summary") {
		t.Error("two seals of one text are equal: the nonce is not fresh")
	}
	for _, k := range []*Keys{a, ring(t, "b", "a")} {
		got, err := k.Open("t1", blob)
		if err != nil || got != "the summary" {
			t.Errorf("Open = %q, %v", got, err)
		}
	}
}

// Every change of a blob is refused: a flipped bit anywhere in the sealed
// part, a key id swapped for another key the ring holds, a truncation; an
// unknown key id is ErrUnknownKey; another tenant cannot open it.
func TestOpenRefuses(t *testing.T) {
	k := ring(t, "a", "b")
	blob := k.Seal("t1", "the summary")
	head := len("rc1.a.")
	for i := head; i < len(blob); i++ {
		b := []byte(blob)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		if _, err := k.Open("t1", string(b)); !errors.Is(err, ErrTampered) {
			t.Fatalf("byte %d changed: %v", i, err)
		}
	}
	if _, err := k.Open("t2", blob); !errors.Is(err, ErrTampered) {
		t.Errorf("another tenant opened the item: %v", err)
	}
	for name, c := range map[string]struct {
		blob string
		want error
	}{
		"other key id":   {strings.Replace(blob, "rc1.a.", "rc1.b.", 1), ErrTampered},
		"unknown key id": {strings.Replace(blob, "rc1.a.", "rc1.z.", 1), ErrUnknownKey},
		"other version":  {strings.Replace(blob, "rc1.", "rc2.", 1), ErrTampered},
		"truncated":      {blob[:head+4], ErrTampered},
		"empty":          {"", ErrTampered},
	} {
		if _, err := k.Open("t1", c.blob); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

// A ring refuses ids that would not survive in a blob, duplicates and
// empty secrets.
func TestNewKeysRefuses(t *testing.T) {
	for name, keys := range map[string][]Key{
		"none":         nil,
		"empty id":     {{ID: "", Secret: []byte("s")}},
		"dotted id":    {{ID: "a.b", Secret: []byte("s")}},
		"duplicate":    {{ID: "a", Secret: []byte("s")}, {ID: "a", Secret: []byte("t")}},
		"empty secret": {{ID: "a"}},
	} {
		if _, err := NewKeys(keys); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
