package config

import (
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"
)

// validateStore checks the store section: the driver and what it needs.
func (c *Config) validateStore(bad func(field, format string, args ...any)) {
	s := c.Store
	switch s.Driver {
	case "sqlite":
		if s.DSN != "" || s.DSNEnv != "" {
			bad("store.dsn", "is for driver postgres; driver sqlite uses store.path")
		}
	case "postgres":
		switch {
		case s.DSN != "" && s.DSNEnv != "":
			bad("store.dsn", "set store.dsn or store.dsn_env, not both")
		case s.DSN == "" && s.DSNEnv == "":
			bad("store.dsn_env", "driver postgres needs a DSN: name an environment variable that holds it (or set store.dsn)")
		case s.DSNEnv != "" && os.Getenv(s.DSNEnv) == "":
			bad("store.dsn_env", "environment variable %s is not set", s.DSNEnv)
		}
	default:
		bad("store.driver", "want sqlite or postgres, got %q", s.Driver)
	}
	if s.CommitBatch < 1 || s.CommitBatch > 10000 {
		bad("store.commit_batch", "want 1 to 10000, got %d", s.CommitBatch)
	}
	if w := s.CommitWindow.Std(); w > 100*time.Millisecond {
		bad("store.commit_window", "%s is longer than 100ms: every write would wait that long", w)
	}
	if r := s.Retention.Std(); r != 0 && r < time.Minute {
		bad("store.retention", "%s is shorter than a minute (0 or unset: keep forever)", r)
	}
}

var kvPassword = regexp.MustCompile(`(^|\s)password\s*=`)

// DSNHasPassword reports whether store.dsn itself holds a password (the
// server warns: store.dsn_env keeps it out of the file).
func (s Store) DSNHasPassword() bool {
	if s.DSN == "" {
		return false
	}
	if strings.HasPrefix(s.DSN, "postgres://") || strings.HasPrefix(s.DSN, "postgresql://") {
		u, err := url.Parse(s.DSN)
		if err != nil {
			return strings.Contains(s.DSN, "password")
		}
		_, ok := u.User.Password()
		return ok || u.Query().Has("password")
	}
	return kvPassword.MatchString(s.DSN)
}

// StoreField names the field the DSN came from, for error messages.
func (s Store) DSNField() string {
	if s.DSNEnv != "" {
		return "store.dsn_env (" + s.DSNEnv + ")"
	}
	return "store.dsn"
}
