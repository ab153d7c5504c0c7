package compaction_test

import (
	"strings"
	"testing"

	"github.com/runedge/runedge/filters/compaction"
)

// compaction.keys is checked as a whole: ids unique and without '.', each
// secret named by an environment variable that holds at least 32 bytes.
func TestConfigValidateNamesTheField(t *testing.T) {
	t.Setenv("CMP_GOOD", strings.Repeat("s", 32))
	t.Setenv("CMP_SHORT", "short")
	good := compaction.Config{Keys: []compaction.KeyConfig{{ID: "k2", SecretEnv: "CMP_GOOD"}, {ID: "k1", SecretEnv: "CMP_GOOD"}}}
	if err := good.Validate("compaction"); err != nil {
		t.Fatal(err)
	}
	if s := good.Secrets(); len(s) != 2 || string(s[0]) != strings.Repeat("s", 32) {
		t.Errorf("secrets %q", s)
	}
	key := func(id, env string) compaction.KeyConfig { return compaction.KeyConfig{ID: id, SecretEnv: env} }
	for _, tc := range []struct {
		keys        []compaction.KeyConfig
		field, says string
	}{
		{[]compaction.KeyConfig{key("k1", "CMP_SHORT")}, "compaction.keys[0].secret_env", "at least 32 bytes"},
		{[]compaction.KeyConfig{key("k1", "CMP_UNSET_X")}, "compaction.keys[0].secret_env", "at least 32 bytes"},
		{[]compaction.KeyConfig{key("k1", "not a name")}, "compaction.keys[0].secret_env", "not the secret itself"},
		{[]compaction.KeyConfig{key("a.b", "CMP_GOOD")}, "compaction.keys[0].id", "without '.'"},
		{[]compaction.KeyConfig{key("", "CMP_GOOD")}, "compaction.keys[0].id", "non-empty"},
		{[]compaction.KeyConfig{key("k", "CMP_GOOD"), key("k", "CMP_GOOD")}, "compaction.keys[1].id", "used twice"},
	} {
		err := (&compaction.Config{Keys: tc.keys}).Validate("compaction")
		if err == nil || !strings.Contains(err.Error(), tc.field+": ") || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%+v: want an error naming %s saying %q, got %v", tc.keys, tc.field, tc.says, err)
		}
	}
}

// Setup seals with the configured keys, or with the host's own without.
func TestSetup(t *testing.T) {
	own := compaction.ProcessKeys()
	if k, err := compaction.Setup(compaction.Config{}, own); err != nil || k != own {
		t.Fatalf("no keys: %v %v", k, err)
	}
	t.Setenv("CMP_A", strings.Repeat("a", 32))
	k, err := compaction.Setup(compaction.Config{Keys: []compaction.KeyConfig{{ID: "a", SecretEnv: "CMP_A"}}}, own)
	if err != nil || k == own {
		t.Fatalf("configured keys: %v %v", k, err)
	}
	if blob := k.Seal("t1", "items"); !strings.HasPrefix(blob, "rc1.a.") {
		t.Fatalf("sealed %q", blob)
	}
}
