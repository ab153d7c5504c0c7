package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// /healthz answers 200 while the host serves and 503 draining once its
// shutdown has begun (Drain), so that a gateway's health check takes it out
// of rotation before its listener closes.
func TestHealthzDrainingDuringShutdown(t *testing.T) {
	cfg, _ := runConfig(t)
	srv, err := New(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.WithoutCancel(t.Context()))
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	get := func() (int, string) {
		res, err := http.Get(ts.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get(); code != 200 || body != `{"status":"ok"}` {
		t.Fatalf("serving: %d %s", code, body)
	}
	srv.runs.Drain()
	if code, body := get(); code != 503 || body != `{"status":"draining"}` {
		t.Fatalf("draining: %d %s, want 503 draining", code, body)
	}
}
