package config

import (
	"fmt"
	"strconv"
	"strings"
)

// The standard OpenTelemetry variables runedge's configuration reads
// (opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables).
const (
	EnvOTLPEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvOTLPTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvOTLPProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvOTLPTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvTracesSampler      = "OTEL_TRACES_SAMPLER"
	EnvTracesSamplerArg   = "OTEL_TRACES_SAMPLER_ARG"
)

// ApplyEnv configures tracing from the standard OTEL_* variables where the
// file leaves it unset, as every OpenTelemetry SDK is configured: the
// endpoint (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else
// OTEL_EXPORTER_OTLP_ENDPOINT; set alone, it turns tracing on), the
// protocol and the sampler. A field the file sets wins. It is called where
// the configuration is loaded (the CLI, at start and on every reload),
// with the process's getenv; nothing reads the environment later, except
// the OpenTelemetry SDK's own handling of OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES and the exporter's variables when the tracer
// provider is built. A bad value is an error naming its variable.
func (c *Config) ApplyEnv(getenv func(string) string) error {
	t := &c.Tracing
	if t.Endpoint == "" {
		name, v := firstSet(getenv, EnvOTLPTracesEndpoint, EnvOTLPEndpoint)
		if v != "" {
			if !validEndpoint(v) {
				return fmt.Errorf("%s: want the URL of an OTLP collector (http://otel:4318), got %q", name, v)
			}
			t.Endpoint, t.FromEnv = v, true
		}
	}
	if t.Protocol == "" {
		name, v := firstSet(getenv, EnvOTLPTracesProtocol, EnvOTLPProtocol)
		switch v {
		case "":
		case "grpc":
			t.Protocol = TracingGRPC
		case "http/protobuf":
			t.Protocol = TracingHTTP
		default:
			return fmt.Errorf("%s: want grpc or http/protobuf, got %q", name, v)
		}
	}
	return t.samplerFromEnv(getenv)
}

// samplerFromEnv maps OTEL_TRACES_SAMPLER onto sample_ratio and
// trust_traceparent: the parentbased_ samplers follow a caller's decision
// (trust), the others do not; always_on/off are ratio 1/0, and traceidratio
// takes OTEL_TRACES_SAMPLER_ARG (default 1).
func (t *Tracing) samplerFromEnv(getenv func(string) string) error {
	name := strings.TrimSpace(getenv(EnvTracesSampler))
	if name == "" {
		return nil
	}
	kind, parent := strings.CutPrefix(name, "parentbased_")
	ratio := 1.0
	switch kind {
	case "always_on":
	case "always_off":
		ratio = 0
	case "traceidratio":
		if arg := strings.TrimSpace(getenv(EnvTracesSamplerArg)); arg != "" {
			r, err := strconv.ParseFloat(arg, 64)
			if err != nil || !(r >= 0 && r <= 1) {
				return fmt.Errorf("%s: want a number from 0 to 1, got %q", EnvTracesSamplerArg, arg)
			}
			ratio = r
		}
	default:
		return fmt.Errorf("%s: want always_on, always_off, traceidratio or their parentbased_ forms, got %q", EnvTracesSampler, name)
	}
	if t.SampleRatio == nil {
		t.SampleRatio = &ratio
	}
	if t.TrustTraceparent == nil {
		t.TrustTraceparent = &parent
	}
	return nil
}

// firstSet returns the first of names that getenv finds set, and its value.
func firstSet(getenv func(string) string, names ...string) (string, string) {
	for _, n := range names {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			return n, v
		}
	}
	return "", ""
}
