package config

import (
	"net/url"
	"time"
)

// DefaultSSEKeepalive is how often a silent stream sends a comment line.
// 15 s stays well inside the 60 s idle timeout of common load balancers.
const DefaultSSEKeepalive = 15 * time.Second

// Log configures the process log.
type Log struct {
	// Format is text (default) or json.
	Format string `yaml:"format"`
}

// Metrics configures the Prometheus metrics on the admin listener.
type Metrics struct {
	// TenantLabel adds a tenant label to the request, run and token
	// metrics. Off by default: tenants are unbounded in number, and every
	// label value is a time series a scraper must keep.
	TenantLabel bool `yaml:"tenant_label"`
}

// Tracing configures OpenTelemetry traces, off unless Endpoint is set.
type Tracing struct {
	// Endpoint is the OTLP collector: "http://host:4318" (OTLP/HTTP,
	// spans POSTed to /v1/traces) or "grpc://host:4317" (OTLP/gRPC).
	// https:// and grpcs:// use TLS.
	Endpoint string `yaml:"endpoint"`
	// SamplerRatio is the share of new traces recorded (0..1; default 1).
	// An incoming traceparent's sampled flag is followed either way.
	SamplerRatio *float64 `yaml:"sampler_ratio"`
	// ServiceName is the service.name resource attribute (default runedge).
	ServiceName string `yaml:"service_name"`
}

// Ratio is the sampler ratio with its default applied.
func (t Tracing) Ratio() float64 {
	if t.SamplerRatio == nil {
		return 1
	}
	return *t.SamplerRatio
}

// KeepaliveInterval is limits.sse_keepalive with its default applied; 0
// disables keepalives.
func (l Limits) KeepaliveInterval() time.Duration {
	if l.SSEKeepalive == nil {
		return DefaultSSEKeepalive
	}
	return l.SSEKeepalive.Std()
}

// validateObservability checks the log, metrics, tracing and keepalive
// fields.
func (c *Config) validateObservability(bad func(field, format string, args ...any)) {
	switch c.Log.Format {
	case "", "text", "json":
	default:
		bad("log.format", "want text or json, got %q", c.Log.Format)
	}
	if c.Limits.SSEKeepalive != nil {
		if msg := c.Limits.SSEKeepalive.check(); msg != "" {
			bad("limits.sse_keepalive", "%s", msg)
		} else if d := c.Limits.SSEKeepalive.Std(); d > 0 && d < 100*time.Millisecond {
			bad("limits.sse_keepalive", "%s is too short (at least 100ms, or 0 to disable)", d)
		}
	}
	if r := c.Tracing.SamplerRatio; r != nil && (*r < 0 || *r > 1) {
		bad("tracing.sampler_ratio", "want a number from 0 to 1, got %v", *r)
	}
	if e := c.Tracing.Endpoint; e != "" {
		u, err := url.Parse(e)
		switch {
		case err != nil || u.Host == "":
			bad("tracing.endpoint", "want http(s)://host:port or grpc(s)://host:port, got %q", e)
		case u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "grpc" && u.Scheme != "grpcs":
			bad("tracing.endpoint", "unknown scheme %q (want http, https, grpc or grpcs)", u.Scheme)
		}
	}
}
