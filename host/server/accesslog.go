package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/runedge/runedge/filters"
)

// accessLog writes one line per API request at level Info: method, path,
// status, duration, run id, tenant, bytes written, stream or not. The
// handler decides the format (log.format: text or json). A client that
// went away before the reply ends still gets its line, with the status
// that was sent (or 200 when nothing was).
func (s *Server) accessLog(r *http.Request, rec *recorder, endpoint string, d time.Duration) {
	if !s.log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.String("endpoint", endpoint),
		slog.Int("status", rec.status),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
		slog.String("run_id", rec.Header().Get(filters.HeaderRunID)),
		slog.String("tenant", rec.tenant),
		slog.Int64("bytes", rec.bytes),
		slog.Bool("stream", rec.stream),
	)
}
