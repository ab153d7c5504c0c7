package server

import (
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/internal/httproute"
)

// recorder remembers what was written to a response, for the metrics and
// the access log. The chain tells it what only the chain knows (tenant,
// stream) through note. Flush and write deadlines reach the real writer
// through Unwrap (http.ResponseController).
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	tenant string
	stream bool
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 && code >= 200 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// note records what the chain learnt about the request on its recorder.
func note(w http.ResponseWriter, x *filters.Exchange) {
	if rec, ok := w.(*recorder); ok {
		rec.tenant, rec.stream = x.Identity.TenantID, x.Stream
	}
}

// observe wraps the API's handler: every request is counted and timed and
// gets one access log line.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		var span trace.Span
		if s.tracing != nil {
			r, span = s.tracing.startRequest(w, r)
		}
		next.ServeHTTP(rec, r)
		if rec.status == 0 { // nothing written: net/http sends 200
			rec.status = http.StatusOK
		}
		if span != nil {
			endRequest(span, r, rec.status)
		}
		d := time.Since(start)
		ep := httproute.Label(r.Pattern)
		s.metrics.request(ep, r.Method, rec.status, rec.tenant, d)
		s.accessLog(r, rec, ep, d)
	})
}
