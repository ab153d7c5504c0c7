package config

import (
	"strings"
	"testing"
	"time"
)

// tracing: off without an endpoint; defaults (http, ratio 1, 5s batches)
// when on; bad protocol, ratio, endpoint and batch timeout name their field.
func TestTracingFields(t *testing.T) {
	for _, tc := range []struct {
		yaml     string
		enabled  bool
		protocol string
		ratio    float64
		batch    time.Duration
		err      string
	}{
		{"listen: 127.0.0.1:1\n", false, "", 1, DefaultTracingBatchTimeout, ""},
		{"tracing:\n  endpoint: 127.0.0.1:4318\n  insecure: true\n", true, "", 1, DefaultTracingBatchTimeout, ""},
		{"tracing:\n  endpoint: otel:4317\n  protocol: grpc\n  sample_ratio: 0.25\n  batch_timeout: 100ms\n", true, "grpc", 0.25, 100 * time.Millisecond, ""},
		{"tracing:\n  endpoint: otel:4317\n  protocol: thrift\n", false, "", 0, 0, "tracing.protocol"},
		{"tracing:\n  endpoint: otel:4317\n  sample_ratio: 1.5\n", false, "", 0, 0, "tracing.sample_ratio"},
		{"tracing:\n  endpoint: http://otel:4318\n", true, "", 1, DefaultTracingBatchTimeout, ""},
		{"tracing:\n  endpoint: https://otel.example:4318/v1/traces\n", true, "", 1, DefaultTracingBatchTimeout, ""},
		{"tracing:\n  endpoint: ftp://otel:4318\n", false, "", 0, 0, "tracing.endpoint"},
		{"tracing:\n  endpoint: http://\n", false, "", 0, 0, "tracing.endpoint"},
		{"tracing:\n  endpoint: otel\n", false, "", 0, 0, "tracing.endpoint"},
		{"tracing:\n  endpoint: otel:4318\n  batch_timeout: soon\n", false, "", 0, 0, "tracing.batch_timeout"},
	} {
		c := parseCase(t, tc.yaml, tc.err)
		if c == nil {
			continue
		}
		tr := c.Tracing
		if tr.Enabled() != tc.enabled || tr.Protocol != tc.protocol || tr.Ratio() != tc.ratio || tr.Batch() != tc.batch {
			t.Errorf("%q: enabled %v protocol %q ratio %v batch %v, want %v %q %v %v", tc.yaml,
				tr.Enabled(), tr.Protocol, tr.Ratio(), tr.Batch(), tc.enabled, tc.protocol, tc.ratio, tc.batch)
		}
	}
}

// TestTracingEnv: the standard OTEL_* variables configure what the file
// leaves unset: the endpoint alone turns tracing on (the traces-specific
// variable first), the protocol and the sampler map onto their fields, a
// field the file sets wins, and a bad value names its variable.
func TestTracingEnv(t *testing.T) {
	for _, tc := range []struct {
		yaml     string
		env      map[string]string
		endpoint string
		protocol string
		ratio    float64
		trusted  bool
		err      string
	}{
		{"listen: 127.0.0.1:1\n", nil, "", "", 1, false, ""},
		{"listen: 127.0.0.1:1\n", map[string]string{EnvOTLPEndpoint: "http://otel:4318"}, "http://otel:4318", "", 1, false, ""},
		{"listen: 127.0.0.1:1\n", map[string]string{EnvOTLPEndpoint: "http://a:4318", EnvOTLPTracesEndpoint: "https://b/v1/traces"}, "https://b/v1/traces", "", 1, false, ""},
		{"tracing:\n  endpoint: file:4318\n", map[string]string{EnvOTLPEndpoint: "http://otel:4318"}, "file:4318", "", 1, false, ""},
		{"listen: 127.0.0.1:1\n", map[string]string{EnvOTLPEndpoint: "http://otel:4317", EnvOTLPProtocol: "grpc"}, "http://otel:4317", "grpc", 1, false, ""},
		{"listen: 127.0.0.1:1\n", map[string]string{EnvTracesSampler: "traceidratio", EnvTracesSamplerArg: "0.1"}, "", "", 0.1, false, ""},
		{"listen: 127.0.0.1:1\n", map[string]string{EnvTracesSampler: "parentbased_always_off"}, "", "", 0, true, ""},
		{"listen: 127.0.0.1:1\n", map[string]string{EnvTracesSampler: "parentbased_always_on"}, "", "", 1, true, ""},
		{"tracing:\n  sample_ratio: 0.5\n  trust_traceparent: false\n", map[string]string{EnvTracesSampler: "parentbased_always_off"}, "", "", 0.5, false, ""},
		{"listen: 127.0.0.1:1\n", map[string]string{EnvOTLPEndpoint: "otel"}, "", "", 0, false, EnvOTLPEndpoint},
		{"listen: 127.0.0.1:1\n", map[string]string{EnvOTLPProtocol: "http/thrift"}, "", "", 0, false, EnvOTLPProtocol},
		{"listen: 127.0.0.1:1\n", map[string]string{EnvTracesSampler: "jaeger_remote"}, "", "", 0, false, EnvTracesSampler},
		{"listen: 127.0.0.1:1\n", map[string]string{EnvTracesSampler: "traceidratio", EnvTracesSamplerArg: "2"}, "", "", 0, false, EnvTracesSamplerArg},
	} {
		c, err := Parse([]byte(tc.yaml))
		if err != nil {
			t.Fatal(err)
		}
		err = c.ApplyEnv(func(k string) string { return tc.env[k] })
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: err %v, want one naming %s", tc.env, err, tc.err)
			}
			continue
		}
		tr := c.Tracing
		if err != nil || tr.Endpoint != tc.endpoint || tr.Enabled() != (tc.endpoint != "") || tr.Protocol != tc.protocol ||
			tr.Ratio() != tc.ratio || tr.Trusted() != tc.trusted {
			t.Errorf("%q %v: %+v %v, want endpoint %q protocol %q ratio %v trusted %v", tc.yaml, tc.env, tr, err,
				tc.endpoint, tc.protocol, tc.ratio, tc.trusted)
		}
	}
}
