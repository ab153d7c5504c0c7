package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/config/configtest"
	"github.com/runedge/runedge/runner"
)

// Tokens configured on every test server.
const (
	tokApp   = "tok-app"   // unbound
	tokAcme  = "tok-acme"  // bound to tenant acme
	tokAdmin = "tok-admin" // admin
)

// harness is a real runedge server on 127.0.0.1 with a real SQLite file and
// the default plugin built from source.
type harness struct {
	t   testing.TB
	URL string
	// Admin is the admin API's base URL ("" when admin.listen is off).
	Admin string
	srv   *Server
	cfg   *config.Config
	stop  context.CancelFunc
	done  chan error
}

func start(t testing.TB, mutate func(*config.Config)) *harness {
	t.Helper()
	return serveConfig(t, startConfig(t, mutate))
}

// startConfig is start's configuration: configtest's with the test
// tokens, changed by mutate (nil: as it is) and validated.
func startConfig(t testing.TB, mutate func(*config.Config)) *config.Config {
	t.Helper()
	cfg := configtest.New(t)
	cfg.Tokens = []config.Token{
		{Name: "app", Hash: auth.HashToken(tokApp)},
		{Name: "acme-app", Hash: auth.HashToken(tokAcme), Tenant: "acme"},
		{Name: "ops", Hash: auth.HashToken(tokAdmin), Admin: true},
	}
	if mutate != nil {
		mutate(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func serveConfig(t testing.TB, cfg *config.Config) *harness {
	t.Helper()
	return serveConfigLog(t, cfg, testWriter{t})
}

// serveConfigLog is serveConfig with the server's log (warnings and
// errors) written to logw, for tests that check what the operator sees.
func serveConfigLog(t testing.TB, cfg *config.Config, logw io.Writer) *harness {
	t.Helper()
	return serveListener(t, cfg, logw, nil)
}

// serveListener is serveConfigLog with the API listener wrapped by wrap
// (nil: as it is), for tests that watch the connections.
func serveListener(t testing.TB, cfg *config.Config, logw io.Writer, wrap func(net.Listener) net.Listener) *harness {
	t.Helper()
	return serveLogger(t, cfg, slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn})), wrap)
}

// serveLogger is serveListener with the server's whole log given.
func serveLogger(t testing.TB, cfg *config.Config, log *slog.Logger, wrap func(net.Listener) net.Listener) *harness {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	srv, err := New(ctx, cfg, log)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close(ctx)
		stop()
		t.Fatal(err)
	}
	h := &harness{t: t, URL: "http://" + ln.Addr().String(), srv: srv, cfg: cfg, stop: stop, done: make(chan error, 1)}
	if wrap != nil {
		ln = wrap(ln)
	}
	ls := Listeners{API: ln}
	if cfg.Admin.Listen != "off" {
		if ls.Admin, err = net.Listen("tcp", cfg.Admin.Listen); err != nil {
			ln.Close()
			srv.Close(ctx)
			stop()
			t.Fatal(err)
		}
		h.Admin = "http://" + ls.Admin.Addr().String()
	}
	go func() { h.done <- srv.Run(ctx, ls) }()
	t.Cleanup(func() { h.shutdown() })
	return h
}

// shutdown stops the server as SIGTERM would and waits for it.
func (h *harness) shutdown() error {
	h.stop()
	select {
	case err := <-h.done:
		h.done <- err // later calls see it too
		return err
	case <-time.After(30 * time.Second):
		h.t.Fatal("server did not shut down")
		return nil
	}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// do sends a request; headers are name, value pairs. A request with no
// Authorization header among them gets tokApp's.
func (h *harness) do(method, path, body string, headers ...string) *http.Response {
	h.t.Helper()
	req, err := http.NewRequest(method, h.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tokApp)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if req.Header.Get("Authorization") == "-" {
		req.Header.Del("Authorization")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

// body reads and closes a response body.
func body(t testing.TB, res *http.Response) []byte {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// run reads a run through the native API with the admin token.
func (h *harness) run(id string) runner.Run {
	h.t.Helper()
	res := h.do("GET", "/runner/v1/runs/"+id, "", "Authorization", "Bearer "+tokAdmin)
	b := body(h.t, res)
	if res.StatusCode != 200 {
		h.t.Fatalf("get run %s: %d %s", id, res.StatusCode, b)
	}
	var r runner.Run
	if err := json.Unmarshal(b, &r); err != nil {
		h.t.Fatal(err)
	}
	return r
}

// waitRun polls the run until cond holds or 10 s pass.
func (h *harness) waitRun(id string, cond func(runner.Run) bool) runner.Run {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := h.run(id)
		if cond(r) {
			return r
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("run %s never reached the expected state; last: %+v", id, r)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sseEvent is one server-sent event; ID is its id line's value, "" without
// one.
type sseEvent struct {
	ID    string
	Event string
	Data  string
}

// readEvents reads every SSE event of a stream until it ends.
func readEvents(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Data != "" || cur.Event != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			cur.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.Data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

const chatBody = `{"model":"service","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello there runedge"}]}`
