package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/internal/logbuf"
)

// `runedge serve` writes one access line per API request to standard
// error, in the log's format (text or json), with the request's method,
// path, endpoint, status, duration, run id, tenant, bytes and stream; the
// lines are out by the time serve returns.
func TestServeWritesAccessLines(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			cache := filepath.Join(dir, "cache")
			if err := os.Mkdir(cache, 0o700); err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			cfg := fmt.Sprintf("listen: %s\ntokens:\n  - name: app\n    hash: %s\n    tenant: acme\nstore:\n  driver: sqlite\n  path: %s\n"+
				"plugins:\n  cache_dir: %s\n  store_dir: %s\nadmin:\n  listen: \"off\"\nlog:\n  format: %s\n",
				addr, auth.HashToken("tok"), filepath.Join(dir, "runs.db"), cache, filepath.Join(dir, "plugins"), format)
			path := filepath.Join(dir, "runedge.yaml")
			if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stderr logbuf.Buffer
			done := make(chan int, 1)
			go func() {
				done <- Main(ctx, []string{"serve", "--config", path}, Env{Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }})
			}()
			url := "http://" + addr + "/v1/chat/completions"
			var res *http.Response
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				req, _ := http.NewRequest("POST", url, strings.NewReader(`{"model":"service","messages":[{"role":"user","content":"hello"}]}`))
				req.Header.Set("Authorization", "Bearer tok")
				if res, err = http.DefaultClient.Do(req); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("serve not answering: %v\n%s", err, stderr.String())
				}
			}
			reply, _ := io.ReadAll(res.Body)
			res.Body.Close()
			runID := res.Header.Get("x-service-run-id")
			if res.StatusCode != 200 || runID == "" {
				t.Fatalf("%d %s", res.StatusCode, reply)
			}
			cancel()
			if code := <-done; code != 0 {
				t.Fatalf("serve exited %d:\n%s", code, stderr.String())
			}
			var lines []string
			sc := bufio.NewScanner(strings.NewReader(stderr.String()))
			for sc.Scan() {
				if strings.Contains(sc.Text(), "request") && strings.Contains(sc.Text(), "/v1/chat/completions") {
					lines = append(lines, sc.Text())
				}
			}
			if len(lines) != 1 {
				t.Fatalf("%d access lines, want 1:\n%s", len(lines), stderr.String())
			}
			line := lines[0]
			if format == "text" {
				want := regexp.MustCompile(`^time=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d) level=INFO msg=request method=POST ` +
					`path=/v1/chat/completions endpoint=chat.completions status=200 duration_ms=\d+(\.\d+)? run_id=` + runID +
					` tenant=acme bytes=` + fmt.Sprint(len(reply)) + ` stream=false$`)
				if !want.MatchString(line) {
					t.Fatalf("line %q, want %s", line, want)
				}
				return
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("not JSON: %q", line)
			}
			if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(m["time"])); err != nil || m["level"] != "INFO" || m["msg"] != "request" ||
				m["method"] != "POST" || m["path"] != "/v1/chat/completions" || m["endpoint"] != "chat.completions" || m["status"] != 200.0 ||
				m["duration_ms"].(float64) <= 0 || m["run_id"] != runID || m["tenant"] != "acme" || m["bytes"] != float64(len(reply)) ||
				m["stream"] != false || len(m) != 12 {
				t.Fatalf("line %q", line)
			}
		})
	}
}
