package config

import (
	"net"
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
	// Endpoint is the collector's host:port (4318 for OTLP/HTTP, 4317 for
	// OTLP/gRPC by convention). Empty: tracing is off.
	Endpoint string `yaml:"endpoint"`
	// Protocol is http (OTLP/HTTP protobuf, POST /v1/traces; the default)
	// or grpc.
	Protocol string `yaml:"protocol"`
	// Insecure sends in plaintext, for a collector on the same host or
	// network; the default is TLS.
	Insecure bool `yaml:"insecure"`
	// SampleRatio is the share of new traces recorded, 0 to 1 (default 1).
	// A request that arrives with a traceparent follows its caller's
	// sampling decision.
	SampleRatio *float64 `yaml:"sample_ratio"`
	// BatchTimeout is the longest a finished span waits before it is
	// exported (default 5s). Shutdown flushes what is left.
	BatchTimeout Duration `yaml:"batch_timeout"`
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
	if msg := t.BatchTimeout.check(); msg != "" {
		bad("tracing.batch_timeout", "%s", msg)
	}
	if t.Endpoint == "" {
		return
	}
	if host, port, err := net.SplitHostPort(t.Endpoint); err != nil || host == "" || port == "" {
		bad("tracing.endpoint", "want host:port of an OTLP collector, got %q", t.Endpoint)
	}
}
