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
		{"tracing:\n  endpoint: http://otel:4318/v1/traces\n", false, "", 0, 0, "tracing.endpoint"},
		{"tracing:\n  endpoint: otel:4318\n  batch_timeout: soon\n", false, "", 0, 0, "tracing.batch_timeout"},
	} {
		c, err := Parse([]byte(tc.yaml))
		if err == nil {
			err = c.Validate()
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want one naming %s", tc.yaml, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.yaml, err)
			continue
		}
		tr := c.Tracing
		if tr.Enabled() != tc.enabled || tr.Protocol != tc.protocol || tr.Ratio() != tc.ratio || tr.Batch() != tc.batch {
			t.Errorf("%q: enabled %v protocol %q ratio %v batch %v, want %v %q %v %v", tc.yaml,
				tr.Enabled(), tr.Protocol, tr.Ratio(), tr.Batch(), tc.enabled, tc.protocol, tc.ratio, tc.batch)
		}
	}
}
