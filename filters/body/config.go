package body

import (
	"time"

	"github.com/runedge/runedge/internal/confval"
)

// Config is the stage's part of the limits section of the configuration
// file (limits.max_body_bytes, limits.read_body_timeout,
// limits.max_bytes_in_flight, limits.bytes_in_flight_wait); host/config
// inlines it there.
type Config struct {
	// MaxBodyBytes bounds a request body: a larger one is a 413.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// ReadBodyTimeout bounds receiving a request's whole body: a client
	// that trickles it is cut off with a 408.
	ReadBodyTimeout confval.Duration `yaml:"read_body_timeout"`
	// MaxBytesInFlight bounds the bytes of request bodies the host
	// processes at once (Gate): a request past it waits, then is refused
	// with a 503. 0 means the default.
	MaxBytesInFlight int64 `yaml:"max_bytes_in_flight"`
	// BytesInFlightWait is how long a request waits for room under
	// MaxBytesInFlight before its 503. 0 means the default.
	BytesInFlightWait confval.Duration `yaml:"bytes_in_flight_wait"`
}

// Defaults of Config.
const (
	DefaultMaxBodyBytes    = 1 << 20
	DefaultReadBodyTimeout = 30 * time.Second
	// DefaultMaxBytesInFlight keeps an agent-sized turn's copies (about
	// five of a 230 KB history each) within the host's peak-RSS target at
	// 32 connections (RATIONALE.md, "Bytes in flight"), and admits some
	// 3,000 small requests at once.
	DefaultMaxBytesInFlight  = 2 << 20
	DefaultBytesInFlightWait = 30 * time.Second
)

// Defaults fills the fields left unset.
func (c *Config) Defaults() {
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.ReadBodyTimeout == (confval.Duration{}) {
		c.ReadBodyTimeout = confval.Dur(DefaultReadBodyTimeout)
	}
	if c.MaxBytesInFlight == 0 {
		c.MaxBytesInFlight = DefaultMaxBytesInFlight
	}
	if c.BytesInFlightWait == (confval.Duration{}) {
		c.BytesInFlightWait = confval.Dur(DefaultBytesInFlightWait)
	}
}

// Validate reports each bad field, named under path (the section).
func (c *Config) Validate(path string) error {
	p := confval.At(path)
	if c.MaxBodyBytes < 0 {
		p.Add("max_body_bytes", "must be positive")
	}
	p.Duration("read_body_timeout", c.ReadBodyTimeout)
	if c.MaxBytesInFlight < 0 {
		p.Add("max_bytes_in_flight", "must be positive")
	}
	p.Duration("bytes_in_flight_wait", c.BytesInFlightWait)
	return p.Err()
}
