package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/sqlite"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = Main(context.Background(), args, Env{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }})
	return code, o.String(), e.String()
}

func TestTokenCommands(t *testing.T) {
	code, out, _ := run(t, "token", "hash", "dev-token")
	if code != 0 || strings.TrimSpace(out) != auth.HashToken("dev-token") {
		t.Fatalf("token hash: %d %q", code, out)
	}
	code, out, _ = run(t, "token", "new")
	var tok, hash string
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "token: "); ok {
			tok = v
		}
		if v, ok := strings.CutPrefix(line, "hash:  "); ok {
			hash = v
		}
	}
	if code != 0 || len(tok) < 20 || hash != auth.HashToken(tok) {
		t.Fatalf("token new: %d %q", code, out)
	}
}

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("listen: 127.0.0.1:9000\n"), 0o644)
	os.WriteFile(bad, []byte("limits:\n  max_body_bytes: -5\n"), 0o644)
	if code, out, errOut := run(t, "config", "check", "--config", good); code != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("good config: %d %s %s", code, out, errOut)
	}
	// serve refuses the same file at start, naming the field.
	bothRefuse(t, bad, "limits.max_body_bytes")
}

// bothRefuse checks that `config check` and `serve` both refuse the file at
// path with exit code 1 and an error that says want: serve at start must
// refuse what config check refuses, for the same reason.
func bothRefuse(t *testing.T, path, want string) {
	t.Helper()
	for _, cmd := range [][]string{{"config", "check"}, {"serve"}} {
		code, _, errOut := run(t, append(cmd, "--config", path)...)
		if code != 1 || !strings.Contains(errOut, want) {
			t.Fatalf("%s: %d %s", strings.Join(cmd, " "), code, errOut)
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	if code, _, errOut := run(t, "frobnicate"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Fatalf("%d %s", code, errOut)
	}
}

func TestRunsTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	for i, id := range []string{"run_old", "run_new"} {
		// The first run opens the session and thread, the second continues them.
		trace := map[string]string{"run_new": "4bf92f3577b34da6a3ce929d0e0e4736"}[id] // run_old: traced by nobody
		if err := st.StartRun(ctx, &runner.Run{ID: id, Object: "run", Status: runner.StatusRunning, SessionID: "sess_1",
			ThreadID: "thread_1", TenantID: "acme", Actor: runner.Actor{ID: "u-7", Type: "user"},
			Endpoint: "responses", Model: "service", CreatedAt: now, StartedAt: &now, TraceID: trace}, i == 0, i == 0); err != nil {
			t.Fatal(err)
		}
	}
	end, dur, ttft := now+2, int64(1530), int64(42)
	if err := st.Transition(ctx, "run_new", runner.Transition{Status: runner.StatusCompleted, EndedAt: &end,
		Usage: &runner.Usage{InputTokens: 3, OutputTokens: 4, TotalTokens: 7}, DurationMs: &dur, TimeToFirstTokenMs: &ttft}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	code, out, errOut := run(t, "runs", "--db", path)
	if code != 0 {
		t.Fatalf("%d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "RUN") || !strings.Contains(lines[0], "DURATION  TTFT") ||
		!strings.Contains(lines[1], "run_new") || !strings.Contains(lines[1], "completed") || !strings.Contains(lines[1], "7") ||
		!strings.Contains(lines[1], " 1.53s ") || !strings.Contains(lines[1], " 42ms ") ||
		!strings.HasSuffix(lines[0], "TRACE") || !strings.HasSuffix(lines[1], " 4bf92f3577b34da6a3ce929d0e0e4736") ||
		!strings.Contains(lines[2], "run_old") || !strings.Contains(lines[2], "u-7") || !strings.HasSuffix(lines[2], " -") {
		t.Fatalf("table:\n%s", out)
	}
	if code, _, _ := run(t, "runs", "--db", path, "--status", "sleeping"); code != 1 {
		t.Fatal("unknown status accepted")
	}
}

// TestDefaultTokenAdminOnlyWithoutFile: SERVICE_TOKEN (or the generated
// token) is an admin token only for a file-less server; a configuration
// file without tokens gets an ordinary one.
func TestDefaultTokenAdminOnlyWithoutFile(t *testing.T) {
	env := Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string {
		if k == "SERVICE_TOKEN" {
			return "svc"
		}
		return ""
	}}
	for _, fileless := range []bool{true, false} {
		cfg := config.Default()
		if err := defaultToken(cfg, env, fileless); err != nil {
			t.Fatal(err)
		}
		if len(cfg.Tokens) != 1 || cfg.Tokens[0].Hash != auth.HashToken("svc") {
			t.Fatalf("tokens: %+v", cfg.Tokens)
		}
		if cfg.Tokens[0].Admin != fileless {
			t.Fatalf("file-less %v: admin %v", fileless, cfg.Tokens[0].Admin)
		}
	}
}

// `runs recover --host` marks only that host's unfinished runs.
func TestRunsRecoverHost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	for id, host := range map[string]string{"run_a": "host-a", "run_b": "host-b"} {
		if err := st.StartRun(ctx, &runner.Run{ID: id, Status: runner.StatusRunning, TenantID: "acme",
			HostID: host, CreatedAt: now, StartedAt: &now}, false, false); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	if code, _, errOut := run(t, "runs", "recover", "--db", path); code == 0 || !strings.Contains(errOut, "--host") {
		t.Fatalf("recover without --host: %d %s", code, errOut)
	}
	code, out, errOut := run(t, "runs", "recover", "--db", path, "--host", "host-a")
	if code != 0 || !strings.Contains(out, "1 runs of host host-a") {
		t.Fatalf("%d %s %s", code, out, errOut)
	}
	st, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, _ := st.GetRun(ctx, "", "run_a")
	b, _ := st.GetRun(ctx, "", "run_b")
	if a.Status != runner.StatusFailed || a.StatusReason != runner.ReasonInterrupted || b.Status != runner.StatusRunning {
		t.Fatalf("after recover: a %s/%s, b %s", a.Status, a.StatusReason, b.Status)
	}
}

// TestConfigCheckRefusesOpenCacheDir: a plugins.cache_dir that group or
// others may write is refused by config check and by serve at start.
func TestConfigCheckRefusesOpenCacheDir(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	if err := os.Mkdir(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(cache, 0o777)
	path := filepath.Join(dir, "c.yaml")
	// Both listeners on free ports: the admin default (8081) may be taken
	// by another process, and serve must fail on the cache, not on a port.
	os.WriteFile(path, []byte("listen: 127.0.0.1:0\nadmin:\n  listen: 127.0.0.1:0\nplugins:\n  cache_dir: "+cache+"\n"), 0o644)
	bothRefuse(t, path, "writable by group or others")
}

// runedge usage sums the ledger of the store's file, per tenant and day,
// as a table.
func TestUsageTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC).Unix()
	for i, tenant := range []string{"acme", "acme", "globex"} {
		id := fmt.Sprintf("run_%d", i)
		if err := st.StartRun(ctx, &runner.Run{ID: id, Status: runner.StatusRunning, TenantID: tenant,
			Actor: runner.Actor{ID: "u-7"}, CreatedAt: day, StartedAt: &day}, false, false); err != nil {
			t.Fatal(err)
		}
		end := day + int64(i)
		if err := st.Transition(ctx, id, runner.Transition{Status: runner.StatusCompleted, EndedAt: &end,
			Usage: &runner.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15},
			Ledger: &runner.UsageEntry{RunID: id, TenantID: tenant, ActorID: "u-7", Token: "app", At: end,
				InputTokens: 10, OutputTokens: 5, CostNanos: 2_500_000}}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	code, out, errOut := run(t, "usage", "--db", path, "--from", "2026-03-01", "--to", "2026-04-01")
	if code != 0 {
		t.Fatalf("%d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "TENANT") ||
		!strings.Contains(lines[1], "2026-03-04") || !strings.Contains(lines[1], "acme") || !strings.Contains(lines[1], " 30 ") ||
		!strings.Contains(lines[1], "0.005000") || !strings.Contains(lines[2], "globex") || !strings.Contains(lines[2], " 15 ") {
		t.Fatalf("usage table:\n%s", out)
	}
	if code, _, errOut := run(t, "usage", "--db", path, "--bucket", "week"); code == 0 || !strings.Contains(errOut, "bucket") {
		t.Fatalf("--bucket week: %d %s", code, errOut)
	}
}
