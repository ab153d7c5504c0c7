package telemetry

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/runedge/runedge/filters"
)

// AccessLog writes one line per API request at level Info: method, path,
// status, duration, run id, tenant, bytes written, stream or not, at time
// at (the request's end, the clock read its duration came from). The
// handler decides the format (log.format: text or json). A client that
// went away before the reply ends still gets its line, with the status
// that was sent (or 200 when nothing was). Its context marks the line as
// an access line, which a LogOutput's handler buffers; a LogOutput's own
// text or JSON handler (TextHandler, JSONHandler) gets the line appended
// by hand in its format (accessline.go).
//
// The record goes to the handler directly, without a source position: the
// Logger's own methods look up their caller's program counter
// (runtime.Callers) for every line, about 0.5% of a `make run` request's
// CPU, for a position no access line prints.
func AccessLog(log *slog.Logger, r *http.Request, rec *Recorder, endpoint string, at time.Time, d time.Duration) {
	h := log.Handler()
	if s, ok := h.(accessSplit); ok && s.line != lineSlog {
		if !s.direct.Enabled(r.Context(), slog.LevelInfo) {
			return
		}
		a := accessFields{
			method: r.Method, path: r.URL.Path, endpoint: endpoint, status: rec.Status,
			durationMS: float64(d.Microseconds()) / 1000, runID: runID(rec),
			tenant: rec.Tenant, bytes: rec.Bytes, stream: rec.Stream,
		}
		bp := lineBufs.Get().(*[]byte)
		b, ok := appendAccessLine((*bp)[:0], s.line, at, &a)
		if ok {
			s.o.writeBuffered(b)
		}
		if cap(b) <= 16<<10 {
			*bp = b
			lineBufs.Put(bp)
		}
		if ok {
			return
		}
	}
	var ctx context.Context = accessContext{r.Context()} // boxed once for both calls
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	line := slog.NewRecord(at, slog.LevelInfo, "request", 0)
	line.AddAttrs(
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.String("endpoint", endpoint),
		slog.Int("status", rec.Status),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
		slog.String("run_id", runID(rec)),
		slog.String("tenant", rec.Tenant),
		slog.Int64("bytes", rec.Bytes),
		slog.Bool("stream", rec.Stream),
	)
	_ = h.Handle(ctx, line)
}

// runID is the reply's run id header (Header().Get), read under its
// canonical name as the run stage sets it, without canonicalizing it again.
func runID(rec *Recorder) string {
	if vs := rec.Header()[filters.HeaderRunID]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}
