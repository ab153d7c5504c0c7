package config

import (
	"net"
	"net/url"
	"strings"
	"time"
)

// Tracing protocols (tracing.protocol).
const (
	TracingHTTP = "http"
	TracingGRPC = "grpc"
)

// DefaultTracingBatchTimeout is how long finished spans wait to be sent in
// a batch: the OpenTelemetry SDK's default.
const DefaultTracingBatchTimeout = 5 * time.Second

// Tracing configures OpenTelemetry traces, exported over OTLP. Off unless
// Endpoint is set: then no tracer provider is built and requests create no
// spans at all.
type Tracing struct {
	// Endpoint is the collector: a URL (http://otel:4318, https://…; a URL
	// with no path is the collector's base, and OTLP/HTTP posts to
	// /v1/traces under it, as OTEL_EXPORTER_OTLP_ENDPOINT; a path is the
	// whole traces URL) or host:port (4318 for OTLP/HTTP, 4317 for
	// OTLP/gRPC by convention). Empty: tracing is off, unless
	// OTEL_EXPORTER_OTLP_ENDPOINT is set (see ApplyEnv).
	Endpoint string `yaml:"endpoint"`
	// Protocol is http (OTLP/HTTP protobuf, POST /v1/traces; the default)
	// or grpc.
	Protocol string `yaml:"protocol"`
	// Insecure sends in plaintext, for a collector on the same host or
	// network; the default is TLS. A URL endpoint says it by its scheme.
	Insecure bool `yaml:"insecure"`
	// SampleRatio is the share of traces recorded, 0 to 1 (default 1).
	SampleRatio *float64 `yaml:"sample_ratio"`
	// TrustTraceparent lets a caller's traceparent decide whether its
	// request is sampled (default false: the ratio decides for every
	// request, so a client cannot force traces, or choose the trace id
	// recorded on its runs, at sample_ratio 0). Set it when the callers
	// are your own services (an app server whose traces you want whole).
	TrustTraceparent *bool `yaml:"trust_traceparent"`
	// BatchTimeout is the longest a finished span waits before it is
	// exported (default 5s). Shutdown flushes what is left.
	BatchTimeout Duration `yaml:"batch_timeout"`
	// FromEnv says Endpoint came from OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT:
	// the exporter then reads its variables itself, as every OpenTelemetry
	// SDK does (the base URL's /v1/traces, headers, certificates).
	FromEnv bool `yaml:"-"`
}

// Enabled reports whether traces are exported.
func (t Tracing) Enabled() bool { return t.Endpoint != "" }

// Ratio is sample_ratio with its default applied.
func (t Tracing) Ratio() float64 {
	if t.SampleRatio == nil {
		return 1
	}
	return *t.SampleRatio
}

// Trusted is trust_traceparent with its default applied.
func (t Tracing) Trusted() bool { return t.TrustTraceparent != nil && *t.TrustTraceparent }

// Batch is batch_timeout with its default applied.
func (t Tracing) Batch() time.Duration {
	if t.BatchTimeout.Std() <= 0 {
		return DefaultTracingBatchTimeout
	}
	return t.BatchTimeout.Std()
}

// validateTracing checks the tracing section.
func (c *Config) validateTracing(bad func(field, format string, args ...any)) {
	t := c.Tracing
	switch t.Protocol {
	case "", TracingHTTP, TracingGRPC:
	default:
		bad("tracing.protocol", "want http or grpc, got %q", t.Protocol)
	}
	if t.SampleRatio != nil && !(*t.SampleRatio >= 0 && *t.SampleRatio <= 1) {
		bad("tracing.sample_ratio", "want a number from 0 to 1, got %v", *t.SampleRatio)
	}
	if msg := t.BatchTimeout.Check(); msg != "" {
		bad("tracing.batch_timeout", "%s", msg)
	}
	if t.Endpoint != "" && !validEndpoint(t.Endpoint) {
		bad("tracing.endpoint", "want the URL (http://otel:4318) or host:port of an OTLP collector, got %q", t.Endpoint)
	}
}

// validEndpoint reports whether e is an http(s) URL with a host, or
// host:port.
func validEndpoint(e string) bool {
	if strings.Contains(e, "://") {
		u, err := url.Parse(e)
		return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
	}
	host, port, err := net.SplitHostPort(e)
	return err == nil && host != "" && port != ""
}
