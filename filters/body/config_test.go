package body_test

import (
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/filters/body"
	"github.com/runedge/runedge/internal/confval"
)

func TestConfigDefaults(t *testing.T) {
	var c body.Config
	c.Defaults()
	if c.MaxBodyBytes != body.DefaultMaxBodyBytes || c.ReadBodyTimeout.Std() != body.DefaultReadBodyTimeout {
		t.Fatalf("defaults: %+v", c)
	}
	c = body.Config{MaxBodyBytes: 5, ReadBodyTimeout: confval.Dur(time.Second)}
	c.Defaults()
	if c.MaxBodyBytes != 5 || c.ReadBodyTimeout.Std() != time.Second {
		t.Fatalf("set values overwritten: %+v", c)
	}
}

func TestConfigValidateNamesTheField(t *testing.T) {
	c := body.Config{MaxBodyBytes: -1, ReadBodyTimeout: confval.Dur(-time.Second)}
	err := c.Validate("limits")
	for _, want := range []string{"limits.max_body_bytes: must be positive", "limits.read_body_timeout: must not be negative"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
	c.Defaults()
	c.MaxBodyBytes = 1
	c.ReadBodyTimeout = confval.Dur(time.Second)
	if err := c.Validate("limits"); err != nil {
		t.Errorf("good config: %v", err)
	}
}
