package fleet_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/internal/logbuf"
	"github.com/runedge/runedge/plugins/plugintest"
	"github.com/runedge/runedge/runner"
)

const token = "fleet-test-token"

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds runedge once per test process.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "runedge-fleet-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "runedge")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/runedge/runedge/host/cmd/runedge").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// hostSpec is one host's configuration.
type hostSpec struct {
	id       string
	dsn      string // through store.dsn_env unless inline
	inline   bool   // write the DSN into store.dsn instead
	sqlite   string // a SQLite file instead of PostgreSQL
	delay    time.Duration
	listen   string
	extraEnv []string
	extra    string // YAML appended to the file (sections the file has not)
	// runs is the runs section's body (leases), "" for the defaults.
	runs string
}

// host is a running runedge process.
type host struct {
	id, url string
	config  string // the configuration file's path
	cmd     *exec.Cmd
	stderr  *logbuf.Buffer
	exited  chan struct{}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// writeConfig writes spec's configuration file into dir.
func writeConfig(t *testing.T, dir string, spec hostSpec) string {
	t.Helper()
	wasm := plugintest.Build(t, "github.com/runedge/runedge/plugins/openai")
	store := "  driver: postgres\n  dsn_env: RUNEDGE_FLEET_DSN\n"
	switch {
	case spec.sqlite != "":
		store = "  driver: sqlite\n  path: " + spec.sqlite + "\n"
	case spec.inline:
		store = "  driver: postgres\n  dsn: \"" + spec.dsn + "\"\n"
	}
	cfg := fmt.Sprintf(`listen: %s
host:
  id: %s
tokens:
  - name: fleet
    hash: %s
    admin: true
store:
%sprovider:
  kind: offline
  offline:
    token_delay: %s
plugins:
  cache_dir: %s
  store_dir: %s
admin:
  listen: "off"
chains:
  chat.completions: {map_request: %s, translate: %s}
  responses: {map_request: %s, translate: %s}
`, spec.listen, spec.id, auth.HashToken(token), store, spec.delay, plugintest.CacheDir(t),
		filepath.Join(dir, "plugins"), wasm, wasm, wasm, wasm)
	cfg += spec.extra
	if spec.runs != "" {
		cfg += "runs:\n" + spec.runs
	}
	path := filepath.Join(dir, "runedge.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startProcess starts runedge serve with spec and returns without waiting
// for it to be ready.
func startProcess(t *testing.T, spec hostSpec) *host {
	t.Helper()
	if spec.listen == "" {
		spec.listen = freeAddr(t)
	}
	if spec.delay == 0 {
		spec.delay = 20 * time.Millisecond
	}
	path := writeConfig(t, t.TempDir(), spec)
	cmd := exec.Command(binary(t), "serve", "--config", path)
	cmd.Env = append(os.Environ(), "RUNEDGE_FLEET_DSN="+spec.dsn)
	cmd.Env = append(cmd.Env, spec.extraEnv...)
	h := &host{id: spec.id, url: "http://" + spec.listen, config: path, cmd: cmd, stderr: &logbuf.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = h.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(h.exited) }()
	t.Cleanup(func() { h.kill() })
	return h
}

// startHost starts a host and waits until it answers.
func startHost(t *testing.T, spec hostSpec) *host {
	t.Helper()
	h := startProcess(t, spec)
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-h.exited:
			t.Fatalf("host %s exited at start: %s", spec.id, h.stderr.String())
		default:
		}
		if res, err := h.do("GET", "/v1/models", ""); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return h
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("host %s not ready: %s", spec.id, h.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (h *host) kill() {
	if h.cmd.Process != nil {
		h.cmd.Process.Signal(syscall.SIGKILL)
		<-h.exited
	}
}

func (h *host) do(method, path, body string) (*http.Response, error) {
	req, err := http.NewRequest(method, h.url+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return http.DefaultClient.Do(req)
}

// run reads a run through h's native API.
func (h *host) run(t *testing.T, id string) runner.Run {
	t.Helper()
	res, err := h.do("GET", "/runner/v1/runs/"+id, "")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var r runner.Run
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("GET run %s on %s: %d %s", id, h.id, res.StatusCode, b)
	}
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

// stream is a streaming chat completion in progress.
type stream struct {
	runID string
	res   *http.Response
	lines *bufio.Scanner
}

// longText makes the offline provider stream for about n*delay.
func longText(n int) string {
	return strings.TrimSpace(strings.Repeat("word ", n))
}

// startStream starts a streaming chat completion on h and reads its first
// chunk, so the run is running when it returns.
func startStream(t *testing.T, h *host, words int) *stream {
	t.Helper()
	body := fmt.Sprintf(`{"model":"service","stream":true,"messages":[{"role":"user","content":%q}]}`, longText(words))
	res, err := h.do("POST", "/v1/chat/completions", body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		t.Fatalf("stream on %s: %d %s", h.id, res.StatusCode, b)
	}
	s := &stream{runID: res.Header.Get("X-Service-Run-Id"), res: res, lines: bufio.NewScanner(res.Body)}
	if s.runID == "" {
		t.Fatal("no X-Service-Run-Id header")
	}
	for s.lines.Scan() {
		if strings.HasPrefix(s.lines.Text(), "data: {") {
			return s
		}
	}
	t.Fatalf("stream on %s ended before its first chunk", h.id)
	return nil
}

// rest reads the stream to its end and returns what it carried.
func (s *stream) rest() string {
	defer s.res.Body.Close()
	var b strings.Builder
	for s.lines.Scan() {
		b.WriteString(s.lines.Text())
		b.WriteByte('\n')
	}
	return b.String()
}
