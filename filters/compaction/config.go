package compaction

import (
	"fmt"
	"os"
	"strings"

	"github.com/runedge/runedge/internal/confval"
)

// Config is the compaction section of the configuration file: the keys
// that seal the compaction items of POST /v1/responses/compact. A fleet
// shares them, so an item sealed by one host opens on every other.
type Config struct {
	// Keys: the first seals, every one opens. Rotate by putting a new key
	// first and keeping the old ones while their items matter. None: a
	// random key per process (items do not survive a restart).
	Keys []KeyConfig `yaml:"keys"`
}

// KeyConfig is one key: the id written into the items it seals, and the
// environment variable that holds its secret (never the secret in the
// file).
type KeyConfig struct {
	ID        string `yaml:"id"`
	SecretEnv string `yaml:"secret_env"`
}

// MinSecret is the shortest secret accepted, in bytes: a key guessed is
// every sealed item forged.
const MinSecret = 32

// Defaults does nothing: without keys the host seals with its own.
func (*Config) Defaults() {}

// Validate checks the keys, each problem named under path (the section):
// unique ids without '.', and each secret set in the environment and long
// enough.
func (c *Config) Validate(path string) error {
	p := confval.At(path)
	ids := map[string]bool{}
	for i, k := range c.Keys {
		f := fmt.Sprintf("keys[%d]", i)
		switch {
		case k.ID == "" || strings.Contains(k.ID, "."):
			p.Add(f+".id", "want a non-empty id without '.', got %q", k.ID)
		case ids[k.ID]:
			p.Add(f+".id", "%q is used twice", k.ID)
		}
		ids[k.ID] = true
		switch {
		case !confval.EnvName(k.SecretEnv):
			p.Add(f+".secret_env", "want the name of an environment variable, not the secret itself")
		case len(os.Getenv(k.SecretEnv)) < MinSecret:
			p.Add(f+".secret_env", "environment variable %s must hold a secret of at least %d bytes", k.SecretEnv, MinSecret)
		}
	}
	return p.Err()
}

// Secrets returns each key's secret, read from its environment variable.
func (c Config) Secrets() [][]byte {
	out := make([][]byte, len(c.Keys))
	for i, k := range c.Keys {
		out[i] = []byte(os.Getenv(k.SecretEnv))
	}
	return out
}
