package telemetry

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/runedge/runedge/filters"
)

// AccessLog writes one line per API request at level Info: method, path,
// status, duration, run id, tenant, bytes written, stream or not. The
// handler decides the format (log.format: text or json). A client that
// went away before the reply ends still gets its line, with the status
// that was sent (or 200 when nothing was). Its context marks the line as
// an access line, which a LogOutput's handler buffers.
//
// The record goes to the handler directly, without a source position: the
// Logger's own methods look up their caller's program counter
// (runtime.Callers) for every line, about 0.5% of a `make run` request's
// CPU, for a position no access line prints.
func AccessLog(log *slog.Logger, r *http.Request, rec *Recorder, endpoint string, d time.Duration) {
	var ctx context.Context = accessContext{r.Context()} // boxed once for both calls
	h := log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	line := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	line.AddAttrs(
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.String("endpoint", endpoint),
		slog.Int("status", rec.Status),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
		slog.String("run_id", rec.Header().Get(filters.HeaderRunID)),
		slog.String("tenant", rec.Tenant),
		slog.Int64("bytes", rec.Bytes),
		slog.Bool("stream", rec.Stream),
	)
	_ = h.Handle(ctx, line)
}
