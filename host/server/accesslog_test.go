package server

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/config/configtest"
	"github.com/runedge/runedge/internal/logbuf"
)

// loggingServer starts a server on 127.0.0.1:0 that accepts tokApp and
// writes its JSON log to the returned buffer; the caller closes both
// servers, so a test can read a log that is complete.
func loggingServer(t *testing.T, ctx context.Context) (*Server, *httptest.Server, *logbuf.Buffer) {
	t.Helper()
	cfg := configtest.New(t)
	cfg.Tokens = []config.Token{{Name: "app", Hash: auth.HashToken(tokApp)}}
	logs := &logbuf.Buffer{}
	srv, err := New(ctx, cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return srv, httptest.NewServer(srv.Handler()), logs
}

// Every request gets one JSON access log line with method, path, status,
// duration, run id, tenant, bytes and stream.
func TestAccessLogJSON(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, hs, logs := loggingServer(t, ctx)
	defer hs.Close()
	h := &harness{t: t, URL: hs.URL}

	res := h.do("POST", "/v1/chat/completions", `{"model":"service","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		"x-service-tenant-id", "acme")
	streamed := body(t, res)
	runID := res.Header.Get("x-service-run-id")
	wantError(t, h.do("GET", "/v1/models", "", "Authorization", "Bearer nope"), 401, "authentication_error", "invalid_api_key")
	hs.Close()
	srv.close(ctx)

	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not a JSON line: %s", sc.Text())
		}
		if m["msg"] == "request" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("%d access log lines, want 2:\n%s", len(lines), logs.String())
	}
	s := lines[0]
	if s["method"] != "POST" || s["path"] != "/v1/chat/completions" || s["status"] != 200.0 || s["run_id"] != runID ||
		runID == "" || s["tenant"] != "acme" || s["stream"] != true || s["bytes"] != float64(len(streamed)) ||
		s["duration_ms"].(float64) <= 0 || s["endpoint"] != "chat.completions" {
		t.Fatalf("stream line: %v (run %s, %d bytes)", s, runID, len(streamed))
	}
	f := lines[1]
	if f["method"] != "GET" || f["path"] != "/v1/models" || f["status"] != 401.0 || f["run_id"] != "" || f["stream"] != false {
		t.Fatalf("refused line: %v", f)
	}
}
