package server

import (
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/internal/telemetry"
	"github.com/runedge/runedge/runner"
)

// stageSpans are the spans of the POST chains' stages (filters/builtin.Order).
var stageSpans = []string{"auth", "body", "model", "map-request", "compaction", "run", "translate"}

// tracedUpstream is an OpenAI-compatible upstream that streams an answer,
// or fails with a 500 when the first message says "fail", and keeps the
// traceparent of every request.
type tracedUpstream struct {
	srv *httptest.Server
	mu  sync.Mutex
	tps []string
}

func newTracedUpstream(t *testing.T) *tracedUpstream {
	u := &tracedUpstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.tps = append(u.tps, r.Header.Get("traceparent"))
		u.mu.Unlock()
		if gjson.GetBytes(b, "messages.0.content").Str == "fail" {
			http.Error(w, `{"error":{"message":"boom","type":"server_error"}}`, http.StatusInternalServerError)
			return
		}
		streamOf("Hello", " there")(w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *tracedUpstream) traceparents() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.tps...)
}

func spanID(s *tracepb.Span) string   { return hex.EncodeToString(s.SpanId) }
func parentID(s *tracepb.Span) string { return hex.EncodeToString(s.ParentSpanId) }
func isError(s *tracepb.Span) bool {
	return s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR
}
func statusMessage(s *tracepb.Span) string { return s.GetStatus().GetMessage() }

// A streamed chat completion with an incoming traceparent: the trace is
// continued (same trace id, the root's parent is the caller's span), the
// root span has a sibling span per stage, the run stage's span is the
// parent of the provider call and the store writes, the GenAI and service
// attributes are set, the upstream gets a traceparent naming the provider
// span, and the reply header and the stored run carry the trace id.
func TestTracingStreamedRequest(t *testing.T) {
	rcv := newOTLPReceiver(t)
	up := newTracedUpstream(t)
	h := start(t, func(c *config.Config) {
		viaOpenAI(up.srv.URL+"/v1", nil)(c)
		rcv.config(c)
	})
	const traceID, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	res := h.do("POST", "/v1/chat/completions",
		`{"model":"service","stream":true,"max_completion_tokens":50,"messages":[{"role":"user","content":"hi"}]}`,
		"traceparent", "00-"+traceID+"-"+callerSpan+"-01", "x-service-tenant-id", "acme")
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body(t, res))
	}
	runID := checkRunHeaders(t, res.Header)
	evs := readEvents(t, res.Body)
	res.Body.Close()
	if len(evs) < 2 {
		t.Fatalf("stream of %d events", len(evs))
	}
	if got := res.Header.Get(telemetry.HeaderTraceID); got != traceID {
		t.Fatalf("%s: %q, want the caller's trace id %s", telemetry.HeaderTraceID, got, traceID)
	}
	if got := h.run(runID).TraceID; got != traceID {
		t.Fatalf("stored run trace_id %q, want %s", got, traceID)
	}

	root := "POST /v1/chat/completions"
	want := append([]string{root, "chat up-model", "store.start_run", "store.transition"}, stageSpans...)
	spans, all := rcv.trace(t, traceID, want...)
	if got := rcv.serviceName(); got != "runedge" {
		t.Errorf("resource service.name %q", got)
	}
	r := spans[root]
	if parentID(r) != callerSpan || r.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("root: parent %s kind %v, want the caller's span %s, server", parentID(r), r.Kind, callerSpan)
	}
	for k, v := range map[string]any{
		"gen_ai.operation.name":          "chat",
		"gen_ai.request.model":           "service",
		"gen_ai.response.model":          "service",
		"gen_ai.response.finish_reasons": []string{"stop"},
		"service.run_id":                 runID,
		"service.tenant_id":              "acme",
		"service.session_id":             res.Header.Get(filters.HeaderSessionID),
		"http.route":                     "/v1/chat/completions",
		"http.response.status_code":      int64(200),
	} {
		if got := attr(r, k); !reflect.DeepEqual(got, v) {
			t.Errorf("root %s = %#v, want %#v", k, got, v)
		}
	}
	for _, k := range []string{"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"} {
		if attr(r, k) == nil {
			t.Errorf("root has no %s", k)
		}
	}
	if isError(r) {
		t.Errorf("root failed: %s", statusMessage(r))
	}
	// Stages are siblings under the root, in order, each ending before
	// the next begins, except run, whose span encloses translate's.
	var prev *tracepb.Span
	for _, n := range stageSpans {
		s := spans[n]
		if parentID(s) != spanID(r) {
			t.Errorf("stage %s: parent %s, want the root %s", n, parentID(s), spanID(r))
		}
		if prev != nil && s.StartTimeUnixNano < prev.StartTimeUnixNano {
			t.Errorf("stage %s started before %s", n, prev.Name)
		}
		if n != "run" && n != "translate" && s.EndTimeUnixNano > spans["run"].StartTimeUnixNano {
			t.Errorf("stage %s still open when run began", n)
		}
		prev = s
	}
	if spans["run"].EndTimeUnixNano < spans["translate"].EndTimeUnixNano {
		t.Errorf("the run span ended before translate: it should enclose the run")
	}
	runSpan := spanID(spans["run"])
	for _, n := range []string{"chat up-model", "store.start_run", "store.transition"} {
		if parentID(spans[n]) != runSpan {
			t.Errorf("%s: parent %s, want the run stage's span %s", n, parentID(spans[n]), runSpan)
		}
		if got := attr(spans[n], "service.run_id"); n != "chat up-model" && got != runID {
			t.Errorf("%s service.run_id = %v, want %s", n, got, runID)
		}
	}
	p := spans["chat up-model"]
	for k, v := range map[string]any{
		"gen_ai.operation.name":          "chat",
		"gen_ai.provider.name":           "openai",
		"gen_ai.request.model":           "up-model",
		"gen_ai.request.max_tokens":      int64(50),
		"gen_ai.response.finish_reasons": []string{"stop"},
	} {
		if got := attr(p, k); !reflect.DeepEqual(got, v) {
			t.Errorf("provider span %s = %#v, want %#v", k, got, v)
		}
	}
	if p.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("provider span kind %v", p.Kind)
	}
	if got := attr(spans["store.transition"], "db.system.name"); got != "sqlite" {
		t.Errorf("store span db.system.name %v", got)
	}
	// The upstream's traceparent: same trace, parent = the provider span.
	tps := up.traceparents()
	if len(tps) != 1 || tps[0] != "00-"+traceID+"-"+spanID(p)+"-01" {
		t.Errorf("upstream traceparents %q, want one naming trace %s and span %s", tps, traceID, spanID(p))
	}
	for _, s := range all {
		if s.Name != root && parentID(s) == "" {
			t.Errorf("span %s has no parent", s.Name)
		}
	}
}

// A failed request: an upstream 500 fails the run; the root, the run
// stage's span and the provider span are errors, the root's status names
// the error code the client got. A refused model fails in the model
// stage: its span and the root are errors, and no run stage ran. Without
// an incoming traceparent a new trace starts, named in the header.
func TestTracingFailedRequest(t *testing.T) {
	rcv := newOTLPReceiver(t)
	up := newTracedUpstream(t)
	h := start(t, func(c *config.Config) {
		viaOpenAI(up.srv.URL+"/v1", nil)(c)
		rcv.config(c)
	})
	const root = "POST /v1/chat/completions"

	t.Run("upstream 500", func(t *testing.T) {
		res := h.do("POST", "/v1/chat/completions",
			`{"model":"service","stream":true,"messages":[{"role":"user","content":"fail"}]}`)
		b := body(t, res)
		traceID := res.Header.Get(telemetry.HeaderTraceID)
		if len(traceID) != 32 || strings.Trim(traceID, "0") == "" {
			t.Fatalf("%s %q", telemetry.HeaderTraceID, traceID)
		}
		runID := checkRunHeaders(t, res.Header)
		if got := h.run(runID); got.TraceID != traceID || got.Status != runner.StatusFailed {
			t.Fatalf("run %s/%s trace %q, want failed with trace %s", got.Status, got.StatusReason, got.TraceID, traceID)
		}
		code := gjson.GetBytes(b, "error.code").Str
		if code == "" { // a stream that failed after its headers: the SSE error event
			code = gjson.Get(lastData(string(b)), "error.code").Str
		}
		if code == "" {
			t.Fatalf("no error code in %s", b)
		}
		spans, _ := rcv.trace(t, traceID, root, "run", "chat up-model", "store.transition")
		r := spans[root]
		if len(r.ParentSpanId) != 0 {
			t.Errorf("root of a new trace has parent %s", parentID(r))
		}
		if !isError(r) || statusMessage(r) != code || attr(r, "error.type") != code {
			t.Errorf("root status %v %q error.type %v, want error %q", r.GetStatus().GetCode(), statusMessage(r), attr(r, "error.type"), code)
		}
		if !isError(spans["run"]) {
			t.Errorf("run stage span not an error")
		}
		p := spans["chat up-model"]
		if !isError(p) || attr(p, "error.type") != "provider_error" {
			t.Errorf("provider span status %v error.type %v", p.GetStatus().GetCode(), attr(p, "error.type"))
		}
		if got := attr(spans["store.transition"], "runedge.run.status"); got != "failed" {
			t.Errorf("store.transition status %v", got)
		}
		for _, s := range []string{"auth", "body", "model", "map-request"} {
			if isError(spans[s]) {
				t.Errorf("stage %s marked failed by a later stage's error", s)
			}
		}
		for _, tp := range up.traceparents() {
			if !strings.HasPrefix(tp, "00-"+traceID+"-") {
				t.Errorf("upstream traceparent %q, want trace %s", tp, traceID)
			}
		}
	})

	t.Run("refused model", func(t *testing.T) {
		res := h.do("POST", "/v1/chat/completions", `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`)
		wantError(t, res, http.StatusNotFound, "invalid_request_error", "model_not_found")
		traceID := res.Header.Get(telemetry.HeaderTraceID)
		spans, all := rcv.trace(t, traceID, root, "auth", "body", "model")
		for _, n := range []string{root, "model"} {
			if s := spans[n]; !isError(s) || statusMessage(s) != "model_not_found" {
				t.Errorf("%s: status %v %q, want error model_not_found", n, s.GetStatus().GetCode(), statusMessage(s))
			}
		}
		if got := attr(spans[root], "gen_ai.request.model"); got != "gpt-4o" {
			t.Errorf("root gen_ai.request.model %v", got)
		}
		if got := attr(spans[root], "http.response.status_code"); got != int64(404) {
			t.Errorf("root status code %v", got)
		}
		for _, s := range all {
			if s.Name == "run" || s.Name == "map-request" {
				t.Errorf("span %s: the chain stopped at model", s.Name)
			}
		}
	})
}

// lastData is the data of the last SSE event in a stream's text.
func lastData(stream string) string {
	last := ""
	for _, line := range strings.Split(stream, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok && d != "[DONE]" {
			last = d
		}
	}
	return last
}

// grpcReceiver is an OTLP/gRPC TraceService on 127.0.0.1.
type grpcReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (g *grpcReceiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			g.spans = append(g.spans, ss.Spans...)
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// tracing.protocol grpc exports to a real OTLP/gRPC TraceService; what
// Close flushes arrives too (a batch timeout longer than the test).
func TestTracingOverGRPC(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &grpcReceiver{}
	gs := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(gs, g)
	go gs.Serve(ln)
	defer gs.Stop()
	h := start(t, func(c *config.Config) {
		c.Tracing = config.Tracing{Endpoint: ln.Addr().String(), Protocol: config.TracingGRPC, Insecure: true,
			BatchTimeout: config.Dur(time.Hour)}
	})
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"hi"}`)
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body(t, res))
	}
	body(t, res)
	traceID := res.Header.Get(telemetry.HeaderTraceID)
	if err := h.shutdown(); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	names := map[string]bool{}
	for _, s := range g.spans {
		if hex.EncodeToString(s.TraceId) == traceID {
			names[s.Name] = true
		}
	}
	for _, n := range append([]string{"POST /v1/responses", "chat offline", "store.start_run", "store.transition"}, stageSpans...) {
		if !names[n] {
			t.Errorf("no span %q in trace %s over gRPC: %v", n, traceID, names)
		}
	}
	// The response's history writes ride on the run's (one commit each):
	// no write of their own, so no span of their own.
	for _, n := range []string{"store.begin_response", "store.end_response"} {
		if names[n] {
			t.Errorf("span %q in trace %s: the history write was not joined to the run's", n, traceID)
		}
	}
}
