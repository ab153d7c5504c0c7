package telemetry

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// What the observing wrapper costs around a handler that does nothing:
// the recorder, the request metrics and the access log check (the log is
// off), and the guard that turns a handler's panic into a recorded 500.
func BenchmarkObserve(b *testing.B) {
	m := NewMetrics(false)
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h := Observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }), m, nil, log)
	r := httptest.NewRequest("GET", "/v1/models", nil)
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}
