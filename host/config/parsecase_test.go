package config

import (
	"strings"
	"testing"
)

// parseCase parses and validates one table case's document. With wantErr
// set it checks that the error names that field and returns nil; without,
// it returns the config, or nil after reporting the error. Tables that
// check a section's accessors call it so each states only what it checks.
func parseCase(t *testing.T, doc, wantErr string) *Config {
	t.Helper()
	c, err := Parse([]byte(doc))
	if err == nil {
		err = c.Validate()
	}
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%q: err %v, want one naming %s", doc, err, wantErr)
		}
		return nil
	}
	if err != nil {
		t.Errorf("%q: %v", doc, err)
		return nil
	}
	return c
}
