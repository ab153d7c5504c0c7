package config

import (
	"strings"
	"testing"
)

// compaction.keys is checked as a whole: ids unique and without '.', each
// secret named by an environment variable that holds at least 32 bytes.
func TestCompactionKeys(t *testing.T) {
	t.Setenv("CMP_GOOD", strings.Repeat("s", 32))
	t.Setenv("CMP_SHORT", "short")
	c, err := Parse([]byte("compaction: {keys: [{id: k2, secret_env: CMP_GOOD}, {id: k1, secret_env: CMP_GOOD}]}"))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Compaction.Secrets(); len(s) != 2 || string(s[0]) != strings.Repeat("s", 32) {
		t.Errorf("secrets %q", s)
	}
	for _, tc := range []struct{ doc, field, says string }{
		{"compaction: {keys: [{id: k1, secret_env: CMP_SHORT}]}", "compaction.keys[0].secret_env", "at least 32 bytes"},
		{"compaction: {keys: [{id: k1, secret_env: CMP_UNSET_X}]}", "compaction.keys[0].secret_env", "at least 32 bytes"},
		{"compaction: {keys: [{id: k1, secret_env: 'not a name'}]}", "compaction.keys[0].secret_env", "not the secret itself"},
		{"compaction: {keys: [{id: a.b, secret_env: CMP_GOOD}]}", "compaction.keys[0].id", "without '.'"},
		{"compaction: {keys: [{secret_env: CMP_GOOD}]}", "compaction.keys[0].id", "non-empty"},
		{"compaction: {keys: [{id: k, secret_env: CMP_GOOD}, {id: k, secret_env: CMP_GOOD}]}", "compaction.keys[1].id", "used twice"},
	} {
		_, err := Parse([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%q: want an error naming %s saying %q, got %v", tc.doc, tc.field, tc.says, err)
		}
	}
}
