package server

import (
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/runedge/runedge/host/config"
)

// otlpReceiver is an OTLP/HTTP trace receiver on 127.0.0.1: it decodes
// each POST /v1/traces as the protobuf ExportTraceServiceRequest the
// OpenTelemetry exporters send, and keeps the spans.
type otlpReceiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
	// service is the service.name of the last batch's resource.
	service string
	// resource holds the string attributes of the resources received.
	resource map[string]string
}

func newOTLPReceiver(t testing.TB) *otlpReceiver {
	t.Helper()
	o := &otlpReceiver{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want POST /v1/traces of application/x-protobuf", http.StatusBadRequest)
			return
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		o.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, a := range rs.GetResource().GetAttributes() {
				if o.resource == nil {
					o.resource = map[string]string{}
				}
				o.resource[a.Key] = a.Value.GetStringValue()
				if a.Key == "service.name" {
					o.service = a.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				o.spans = append(o.spans, ss.Spans...)
			}
		}
		o.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// serviceName is the service.name of the last batch received; later
// batches (spans that end after the reply) may still be arriving.
func (o *otlpReceiver) serviceName() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.service
}

// config points a server's tracing at the receiver, in plaintext, with
// short batches.
func (o *otlpReceiver) config(c *config.Config) {
	host, port, _ := net.SplitHostPort(o.srv.Listener.Addr().String())
	c.Tracing = config.Tracing{Endpoint: net.JoinHostPort(host, port), Insecure: true, BatchTimeout: config.Dur(20 * time.Millisecond)}
}

// trace waits until the spans of trace traceID include every name in want
// and returns them by name (the last of a name wins; all of them are in
// the second result).
func (o *otlpReceiver) trace(t testing.TB, traceID string, want ...string) (map[string]*tracepb.Span, []*tracepb.Span) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		byName := map[string]*tracepb.Span{}
		var all []*tracepb.Span
		o.mu.Lock()
		for _, s := range o.spans {
			if hex.EncodeToString(s.TraceId) == traceID {
				byName[s.Name] = s
				all = append(all, s)
			}
		}
		o.mu.Unlock()
		missing := ""
		for _, n := range want {
			if byName[n] == nil {
				missing = n
				break
			}
		}
		if missing == "" {
			return byName, all
		}
		if time.Now().After(deadline) {
			names := make([]string, 0, len(all))
			for _, s := range all {
				names = append(names, s.Name)
			}
			t.Fatalf("trace %s: no span %q among %v", traceID, missing, names)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// attr returns a span attribute's value as a string, an int64 or a
// []string; nil when absent.
func attr(s *tracepb.Span, key string) any {
	for _, a := range s.Attributes {
		if a.Key == key {
			return anyValue(a.Value)
		}
	}
	return nil
}

func anyValue(v *commonpb.AnyValue) any {
	switch x := v.Value.(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_ArrayValue:
		var out []string
		for _, e := range x.ArrayValue.Values {
			out = append(out, e.GetStringValue())
		}
		return out
	}
	return nil
}
