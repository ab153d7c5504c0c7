package server

import (
	"os"
	"testing"
	"time"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/internal/telemetry"
)

// callerTrace is the trace id of a caller's sampled traceparent.
const callerTrace = "0af7651916cd43dd8448eb211c80319c"

// withCallerTrace sends a chat request as a caller whose trace is sampled.
func withCallerTrace(t *testing.T, h *harness) (runID, header string) {
	t.Helper()
	res := h.do("POST", "/v1/chat/completions", chatBody, "traceparent", "00-"+callerTrace+"-b7ad6b7169203331-01")
	body(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	return checkRunHeaders(t, res.Header), res.Header.Get(telemetry.HeaderTraceID)
}

// TestTracingUntrustedTraceparent: at sample_ratio 0 a caller's sampled
// traceparent does not force sampling unless tracing.trust_traceparent
// says so: no span is exported, the run records no trace id and the reply
// names none. A trusted caller's decision is followed, and its trace id is
// recorded.
func TestTracingUntrustedTraceparent(t *testing.T) {
	zero, yes := 0.0, true
	for _, trusted := range []bool{false, true} {
		rcv := newOTLPReceiver(t)
		h := start(t, func(c *config.Config) {
			rcv.config(c)
			c.Tracing.SampleRatio = &zero
			if trusted {
				c.Tracing.TrustTraceparent = &yes
			}
		})
		runID, header := withCallerTrace(t, h)
		recorded := h.run(runID).TraceID
		if !trusted {
			time.Sleep(200 * time.Millisecond) // ten batch timeouts
			rcv.mu.Lock()
			n := len(rcv.spans)
			rcv.mu.Unlock()
			if n != 0 || recorded != "" || header != "" {
				t.Fatalf("untrusted caller at ratio 0: %d spans exported, run trace_id %q, header %q", n, recorded, header)
			}
			continue
		}
		if recorded != callerTrace || header != callerTrace {
			t.Fatalf("trusted caller: run trace_id %q, header %q, want %s", recorded, header, callerTrace)
		}
		rcv.trace(t, callerTrace, "POST /v1/chat/completions")
	}
}

// TestTracingEndpointURL: tracing.endpoint in the URL form every
// OpenTelemetry SDK takes (http://host:port, the collector's base: spans go
// to /v1/traces) exports to a real OTLP/HTTP receiver.
func TestTracingEndpointURL(t *testing.T) {
	rcv := newOTLPReceiver(t)
	h := start(t, func(c *config.Config) {
		c.Tracing = config.Tracing{Endpoint: rcv.srv.URL, BatchTimeout: config.Dur(20 * time.Millisecond)}
	})
	_, header := withCallerTrace(t, h)
	if header != callerTrace {
		t.Fatalf("header %q", header)
	}
	rcv.trace(t, callerTrace, "POST /v1/chat/completions")
}

// TestTracingFromEnvironment: with no tracing section in the file,
// OTEL_EXPORTER_OTLP_ENDPOINT alone turns tracing on (read when the
// configuration is loaded), and OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES name the resource.
func TestTracingFromEnvironment(t *testing.T) {
	rcv := newOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.srv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "edge-west")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
	h := start(t, func(c *config.Config) {
		if c.Tracing.Enabled() {
			t.Fatal("tracing on before the environment was read")
		}
		if err := c.ApplyEnv(os.Getenv); err != nil {
			t.Fatal(err)
		}
		c.Tracing.BatchTimeout = config.Dur(20 * time.Millisecond)
	})
	_, header := withCallerTrace(t, h)
	if header != callerTrace {
		t.Fatalf("header %q: tracing is not on", header)
	}
	rcv.trace(t, callerTrace, "POST /v1/chat/completions")
	if got := rcv.serviceName(); got != "edge-west" {
		t.Fatalf("service.name %q, want OTEL_SERVICE_NAME's", got)
	}
	rcv.mu.Lock()
	env := rcv.resource["deployment.environment"]
	rcv.mu.Unlock()
	if env != "test" {
		t.Fatalf("resource deployment.environment %q, want OTEL_RESOURCE_ATTRIBUTES's", env)
	}
}
