package cli

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/envoy/ecds"
	"github.com/runedge/runedge/envoy/tlstest"
	"github.com/runedge/runedge/filters/auth"
	hostcli "github.com/runedge/runedge/host/cli"
	"github.com/runedge/runedge/internal/logbuf"
	"github.com/runedge/runedge/plugins/plugintest"
)

// cliChild, when set, makes the test binary run the command line with its
// arguments instead of the tests: runedge-xds as a process of its own.
const cliChild = "RUNEDGE_TEST_CLI_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(cliChild) != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		os.Exit(Main(ctx, os.Args[1:], Env{Stdout: os.Stdout, Stderr: os.Stderr}))
	}
	os.Exit(m.Run())
}

// startXDSProcess runs `runedge-xds args...` in a process of its own, until
// the test ends, and returns its ADS and HTTP addresses and its log.
func startXDSProcess(t *testing.T, args ...string) (ads, httpAddr string, logs *logbuf.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), cliChild+"=1")
	logs = &logbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Error("runedge xds did not stop on interrupt")
		}
		if t.Failed() {
			t.Logf("runedge xds log:\n%s", logs)
		}
	})
	m := awaitLine(t, "runedge xds", logs, regexp.MustCompile(`ads=(127\.0\.0\.1:\d+) http=(127\.0\.0\.1:\d+)`), exited)
	return m[1], m[2], logs
}

// awaitLine waits up to a minute for a line of logs that matches re and
// returns its submatches; it fails the test when exited closes first.
func awaitLine(t *testing.T, who string, logs *logbuf.Buffer, re *regexp.Regexp, exited <-chan struct{}) []string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(logs.String()); m != nil {
			return m
		}
		select {
		case <-exited:
			t.Fatalf("%s exited:\n%s", who, logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not report its address:\n%s", who, logs)
		}
	}
}

// Two runedge hosts subscribed to a control plane running in a process of
// its own, over mutual TLS: a plugin change there reaches both, their
// replies change accordingly, and no request fails while it happens. A
// node without a client certificate gets nothing and never appears in the
// control plane's status.
func TestECDSChangeReachesTwoHosts(t *testing.T) {
	v1 := plugintest.Build(t, "../../host/server/testdata/versioned/v1")
	v2 := plugintest.Build(t, "../../host/server/testdata/versioned/v2")
	dir := t.TempDir()
	plugin := filepath.Join(dir, "plugins", "translate.wasm")
	copyFile(t, v1, plugin)
	copyFile(t, plugintest.Build(t, "github.com/runedge/runedge/plugins/openai"), filepath.Join(dir, "plugins", "openai.wasm"))
	gw := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(gw, []byte("chains:\n  chat.completions:\n    map_request: plugins/openai.wasm\n    translate: plugins/translate.wasm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ca := tlstest.New(t, "fleet CA")
	planeCert, planeKey := ca.Server(t, "xds", "127.0.0.1")
	// One certificate per host: the control plane takes a node id only
	// from a certificate that names it.
	hostCert, hostKey := ca.Client(t, "host-a")
	ads, httpAddr, _ := startXDSProcess(t, "--config", gw, "--plugins", filepath.Join(dir, "store"),
		"--tls-cert", planeCert, "--tls-key", planeKey, "--client-ca", ca.CAFile)

	// A node with the CA but no certificate of its own.
	stranger := &ecds.Subscriber{Addr: ads, NodeID: "stranger", CacheDir: t.TempDir(), TLS: ca.ClientConfig(t, "", "")}
	strangerApplied := make(chan struct{}, 1)
	go stranger.Run(ctx, func(context.Context, map[string]ecds.ChainRef) error {
		strangerApplied <- struct{}{}
		return nil
	})

	var hosts []string
	for _, node := range []string{"host-a", "host-b"} {
		cert, key := hostCert, hostKey
		if node != "host-a" {
			cert, key = ca.Client(t, node)
		}
		hosts = append(hosts, startHost(t, ctx, "--xds", ads, "--node", node,
			"--xds-ca", ca.CAFile, "--xds-cert", cert, "--xds-key", key))
	}
	waitFingerprint(t, hosts, "/v1")
	status := planeStatus(t, ca.ClientConfig(t, hostCert, hostKey), httpAddr)
	if _, ok := status.Nodes["stranger"]; ok || len(status.Nodes) != 2 {
		t.Fatalf("the control plane's nodes: %v", status.Nodes)
	}
	select {
	case <-strangerApplied:
		t.Fatal("a node without a certificate was given chains")
	default:
	}

	var stop atomic.Bool
	var sent, failed atomic.Int64
	var wg sync.WaitGroup
	for _, u := range hosts {
		wg.Add(1)
		go func(u string) {
			defer wg.Done()
			for !stop.Load() {
				sent.Add(1)
				if fp, err := chatFingerprint(u); err != nil || (fp != "/v1" && fp != "/v2") {
					failed.Add(1)
					t.Errorf("request during the change: %q %v", fp, err)
				}
			}
		}(u)
	}
	copyFile(t, v2, plugin) // the control plane watches the plugin files too
	waitFingerprint(t, hosts, "/v2")
	stop.Store(true)
	wg.Wait()
	if failed.Load() != 0 || sent.Load() == 0 {
		t.Fatalf("%d of %d requests failed during the change", failed.Load(), sent.Load())
	}
}

// planeStatus reads the control plane's /status as a node with a
// certificate.
func planeStatus(t *testing.T, c *tls.Config, httpAddr string) (st struct{ Nodes map[string]any }) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: c}}
	resp, err := client.Get("https://" + httpAddr + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(to), 0o755)
	tmp := to + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, to); err != nil {
		t.Fatal(err)
	}
}

// startHost starts a runedge host, `runedge serve` of host/cli, with the
// default plugin and a token "tok", subscribed to a control plane with
// xdsFlags (--xds, --node, --xds-ca…); it returns its URL.
func startHost(t *testing.T, ctx context.Context, xdsFlags ...string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "runedge.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
tokens: [{name: app, hash: %q}]
store: {path: %q}
plugins: {cache_dir: %q, store_dir: %q, pool_size: 2, call_timeout: 5s}
`, auth.HashToken("tok"), filepath.Join(dir, "runs.db"), plugintest.CacheDir(t), filepath.Join(dir, "plugins")),
	), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(ctx)
	logs := &logbuf.Buffer{}
	exited := make(chan struct{})
	var code int
	go func() {
		code = hostcli.Main(ctx, append([]string{"serve", "--config", cfg}, xdsFlags...),
			hostcli.Env{Stdout: logs, Stderr: logs, Getenv: func(string) string { return "" }})
		close(exited)
	}()
	t.Cleanup(func() {
		stop()
		select {
		case <-exited:
			if code != 0 {
				t.Errorf("host exited %d:\n%s", code, logs)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("host did not shut down:\n%s", logs)
		}
	})
	return "http://" + awaitLine(t, "host", logs, regexp.MustCompile(`msg="runedge serving" addr=(127\.0\.0\.1:\d+)`), exited)[1]
}

func chatFingerprint(base string) (string, error) {
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions",
		strings.NewReader(`{"model":"service","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer tok")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	if res.StatusCode != 200 {
		return "", &statusError{res.StatusCode, string(b)}
	}
	return gjson.GetBytes(b, "system_fingerprint").Str, nil
}

type statusError struct {
	code int
	body string
}

func (e *statusError) Error() string { return http.StatusText(e.code) + ": " + e.body }

// waitFingerprint waits until every host's replies carry want. The bound is
// generous: on a cold machine each host compiles the fetched plugin from
// scratch (seconds under -race) before it can swap it in.
func waitFingerprint(t *testing.T, hosts []string, want string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for _, u := range hosts {
		for {
			fp, err := chatFingerprint(u)
			if err == nil && fp == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("host %s never answered with %s (last %q, %v)", u, want, fp, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
