package body

import (
	"time"

	"github.com/runedge/runedge/internal/confval"
)

// Config is the stage's part of the limits section of the configuration
// file (limits.max_body_bytes, limits.read_body_timeout); host/config
// inlines it there.
type Config struct {
	// MaxBodyBytes bounds a request body: a larger one is a 413.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// ReadBodyTimeout bounds receiving a request's whole body: a client
	// that trickles it is cut off with a 408.
	ReadBodyTimeout confval.Duration `yaml:"read_body_timeout"`
}

// Defaults of Config.
const (
	DefaultMaxBodyBytes    = 1 << 20
	DefaultReadBodyTimeout = 30 * time.Second
)

// Defaults fills the fields left unset.
func (c *Config) Defaults() {
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.ReadBodyTimeout == (confval.Duration{}) {
		c.ReadBodyTimeout = confval.Dur(DefaultReadBodyTimeout)
	}
}

// Validate reports each bad field, named under path (the section).
func (c *Config) Validate(path string) error {
	p := confval.At(path)
	if c.MaxBodyBytes < 0 {
		p.Add("max_body_bytes", "must be positive")
	}
	p.Duration("read_body_timeout", c.ReadBodyTimeout)
	return p.Err()
}
