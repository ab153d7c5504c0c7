package config

import (
	"fmt"
	"os"
	"strings"

	"github.com/runedge/runedge/internal/confval"
)

// Compaction configures the keys that seal the compaction items of POST
// /v1/responses/compact (filters/compaction). A fleet shares them, so an
// item sealed by one host opens on every other.
type Compaction struct {
	// Keys: the first seals, every one opens. Rotate by putting a new key
	// first and keeping the old ones while their items matter. None: a
	// random key per process (items do not survive a restart).
	Keys []CompactionKey `yaml:"keys"`
}

// CompactionKey is one key: the id written into the items it seals, and
// the environment variable that holds its secret (never the secret in the
// file).
type CompactionKey struct {
	ID        string `yaml:"id"`
	SecretEnv string `yaml:"secret_env"`
}

// minCompactionSecret is the shortest secret accepted, in bytes: a key
// guessed is every sealed item forged.
const minCompactionSecret = 32

// validate checks the keys: unique ids without '.', and each secret set
// in the environment and long enough.
func (c Compaction) validate(bad func(field, format string, args ...any)) {
	ids := map[string]bool{}
	for i, k := range c.Keys {
		f := fmt.Sprintf("compaction.keys[%d]", i)
		switch {
		case k.ID == "" || strings.Contains(k.ID, "."):
			bad(f+".id", "want a non-empty id without '.', got %q", k.ID)
		case ids[k.ID]:
			bad(f+".id", "%q is used twice", k.ID)
		}
		ids[k.ID] = true
		switch {
		case !confval.EnvName(k.SecretEnv):
			bad(f+".secret_env", "want the name of an environment variable, not the secret itself")
		case len(os.Getenv(k.SecretEnv)) < minCompactionSecret:
			bad(f+".secret_env", "environment variable %s must hold a secret of at least %d bytes", k.SecretEnv, minCompactionSecret)
		}
	}
}

// Secrets returns each key's secret, read from its environment variable.
func (c Compaction) Secrets() [][]byte {
	out := make([][]byte, len(c.Keys))
	for i, k := range c.Keys {
		out[i] = []byte(os.Getenv(k.SecretEnv))
	}
	return out
}
