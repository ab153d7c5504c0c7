package openai

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Defaults for the zero values of Config. host/config documents them.
const (
	DefaultConnectTimeout   = 10 * time.Second
	DefaultFirstByteTimeout = 60 * time.Second
	DefaultIdleTimeout      = 30 * time.Second
	DefaultMaxAttempts      = 3
	DefaultBackoffBase      = 250 * time.Millisecond
	DefaultBackoffMax       = 4 * time.Second
	// MaxAttemptsLimit bounds MaxAttempts: retries multiply the load on an
	// upstream that is already failing.
	MaxAttemptsLimit = 10
)

// Config configures the provider. Zero durations and counts take the
// defaults above.
type Config struct {
	// BaseURL is the upstream's API root, the part before
	// /chat/completions: https://api.openai.com/v1, http://vllm:8000/v1,
	// http://localhost:11434/v1 (Ollama).
	BaseURL string
	// APIKey is sent as a bearer token when set. The host reads it from
	// the environment; it is never part of an error message.
	APIKey string
	// Model is the upstream's model name.
	Model string
	// IncludeUsage asks a streamed call for its usage
	// (stream_options.include_usage). Only some upstreams accept the
	// option; without it a streamed answer's usage is not known (zero).
	IncludeUsage bool
	// ConnectTimeout bounds the TCP connect and TLS handshake.
	ConnectTimeout time.Duration
	// FirstByteTimeout bounds a streamed call from sending the request to
	// its first event (connecting, queueing and prompt processing). A
	// non-streamed call has no such limit: its upstream answers only when
	// the whole answer is ready, so the run's own limit bounds it.
	FirstByteTimeout time.Duration
	// IdleTimeout bounds the silence between two events of a stream (time
	// since the last token; keep-alive comments do not count), or between
	// two reads of a whole body.
	IdleTimeout time.Duration
	// MaxAttempts is how many times one call is tried (1: no retries).
	// Retries happen only before any delta was passed on.
	MaxAttempts int
	// BackoffBase and BackoffMax shape the wait between attempts:
	// BackoffBase doubled per retry, capped at BackoffMax, jittered. An
	// upstream's Retry-After above BackoffMax ends the retries.
	BackoffBase, BackoffMax time.Duration
}

// withDefaults fills the zero values and checks the rest.
func (c Config) withDefaults() (Config, error) {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.ConnectTimeout, DefaultConnectTimeout)
	def(&c.FirstByteTimeout, DefaultFirstByteTimeout)
	def(&c.IdleTimeout, DefaultIdleTimeout)
	def(&c.BackoffBase, DefaultBackoffBase)
	def(&c.BackoffMax, DefaultBackoffMax)
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	var errs []error
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("base URL %q is not an http(s) URL", c.BaseURL))
	}
	if c.Model == "" {
		errs = append(errs, errors.New("model is required"))
	}
	if c.MaxAttempts < 1 || c.MaxAttempts > MaxAttemptsLimit {
		errs = append(errs, fmt.Errorf("max attempts %d is not within 1..%d", c.MaxAttempts, MaxAttemptsLimit))
	}
	if c.BackoffBase > c.BackoffMax {
		errs = append(errs, fmt.Errorf("backoff base %s is above backoff max %s", c.BackoffBase, c.BackoffMax))
	}
	for _, d := range []time.Duration{c.ConnectTimeout, c.FirstByteTimeout, c.IdleTimeout, c.BackoffBase, c.BackoffMax} {
		if d < 0 {
			errs = append(errs, errors.New("durations must not be negative"))
			break
		}
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	return c, errors.Join(errs...)
}
