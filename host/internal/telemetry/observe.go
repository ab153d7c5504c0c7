package telemetry

import (
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/internal/httproute"
)

// Recorder remembers what was written to a response, for the metrics and
// the access log. The chain tells it what only the chain knows (tenant,
// stream) through Note. Flush and write deadlines reach the real writer
// through Unwrap (http.ResponseController).
type Recorder struct {
	http.ResponseWriter
	Status int
	Bytes  int64
	Tenant string
	Stream bool
}

func (r *Recorder) WriteHeader(code int) {
	if r.Status == 0 && code >= 200 {
		r.Status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *Recorder) Write(b []byte) (int, error) {
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.Bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *Recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Note records what the chain learnt about the request on its recorder.
func Note(w http.ResponseWriter, x *filters.Exchange) {
	if rec, ok := w.(*Recorder); ok {
		rec.Tenant, rec.Stream = x.Identity.TenantID, x.Stream
	}
}

// Observe wraps the API's handler: every request is counted and timed
// (m), traced when t is not nil, and gets one access log line (log).
//
// A request whose handler panicked is recorded too: it is answered 500
// internal_error in the OpenAI shape when nothing was written yet (its
// connection is closed when the reply had begun), counted and logged like
// any other, and the panic is logged as panics.go says (the first at a
// site with its stack, later ones as a count).
func Observe(next http.Handler, m *Metrics, t *Tracing, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &Recorder{ResponseWriter: w}
		var span trace.Span
		if t != nil {
			r, span = t.StartRequest(w, r)
		}
		defer func() {
			var abort bool
			if p := recover(); p != nil {
				abort = recovered(log, rec, r, p)
				if abort && rec.Status == 0 {
					rec.Status = http.StatusInternalServerError
				}
			}
			if rec.Status == 0 { // nothing written: net/http sends 200
				rec.Status = http.StatusOK
			}
			if span != nil {
				EndRequest(span, r, rec.Status)
			}
			end := time.Now()
			d := end.Sub(start)
			ep := httproute.Label(r.Pattern)
			m.Request(ep, r.Method, rec.Status, rec.Tenant, d)
			AccessLog(log, r, rec, ep, end, d)
			if abort {
				panic(http.ErrAbortHandler)
			}
		}()
		next.ServeHTTP(rec, r)
	})
}
