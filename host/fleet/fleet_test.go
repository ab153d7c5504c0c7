package fleet_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/postgres/pgtest"
)

// Three hosts on one database: a run started on any host is listed and
// read on every host, with the id of the host that ran it; a cancel sent
// to host B of a stream running on host A ends it cancelled within 1 s.
func TestThreeHostsOneHistoryAndCancelAcrossHosts(t *testing.T) {
	dsn := pgtest.Schema(t)
	hosts := []*host{
		startHost(t, hostSpec{id: "host-a", dsn: dsn, delay: 50 * time.Millisecond}),
		startHost(t, hostSpec{id: "host-b", dsn: dsn}),
		startHost(t, hostSpec{id: "host-c", dsn: dsn}),
	}
	// Requests spread over the hosts, with the official SDK.
	ids := map[string]string{}
	for _, h := range hosts {
		var raw *http.Response
		client := openai.NewClient(option.WithBaseURL(h.url+"/v1"), option.WithAPIKey(token))
		c, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
			Model:    "service",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello " + h.id)},
		}, option.WithResponseInto(&raw))
		if err != nil {
			t.Fatal(err)
		}
		if c.Choices[0].Message.Content != "You said: hello "+h.id {
			t.Fatalf("answer %q", c.Choices[0].Message.Content)
		}
		ids[raw.Header.Get("X-Service-Run-Id")] = h.id
	}
	for _, reader := range hosts {
		for id, ranOn := range ids {
			// Read right after the reply ended, on another host: the
			// terminal state was committed before the reply's last byte.
			r := reader.run(t, id)
			if r.Status != runner.StatusCompleted || r.HostID != ranOn {
				t.Fatalf("%s reads run %s as %s on host %q; want completed on %s", reader.id, id, r.Status, r.HostID, ranOn)
			}
		}
		res, err := reader.do("GET", "/runner/v1/runs?limit=100", "")
		if err != nil {
			t.Fatal(err)
		}
		var page runner.Page
		json.NewDecoder(res.Body).Decode(&page)
		res.Body.Close()
		seen := 0
		for _, r := range page.Data {
			if _, ok := ids[r.ID]; ok {
				seen++
			}
		}
		if seen != len(ids) {
			t.Fatalf("%s lists %d of the fleet's %d runs", reader.id, seen, len(ids))
		}
	}

	// Cancel on B a stream running on A.
	a, b, c := hosts[0], hosts[1], hosts[2]
	s := startStream(t, a, 200) // ~10s of tokens
	rest := make(chan string, 1)
	go func() { rest <- s.rest() }()
	began := time.Now()
	res, err := b.do("POST", "/runner/v1/runs/"+s.runID+"/cancel", "")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	took := time.Since(began)
	var cancelled runner.Run
	json.Unmarshal(body, &cancelled)
	if res.StatusCode != 200 || cancelled.Status != runner.StatusCancelled || cancelled.StatusReason != runner.ReasonCancelRequested {
		t.Fatalf("cancel on B: %d %s", res.StatusCode, body)
	}
	if took > time.Second {
		t.Fatalf("cancel across hosts took %s, want within 1s", took)
	}
	select {
	case <-rest:
	case <-time.After(2 * time.Second):
		t.Fatal("the stream on A went on after its run was cancelled")
	}
	if r := c.run(t, s.runID); r.Status != runner.StatusCancelled || r.HostID != "host-a" {
		t.Fatalf("C reads the cancelled run as %s on %q", r.Status, r.HostID)
	}
	t.Logf("cancel on host-b of a stream on host-a recorded in %s", took)
}

// Host A killed with SIGKILL mid-run and restarted with its id: its run
// becomes failed/interrupted; host B's live run is untouched and completes.
func TestKilledHostRecoversOnlyItsRuns(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := startHost(t, hostSpec{id: "host-a", dsn: dsn, delay: 50 * time.Millisecond})
	b := startHost(t, hostSpec{id: "host-b", dsn: dsn, delay: 50 * time.Millisecond})
	onA := startStream(t, a, 200)
	// ~8s: B's run must outlive A's restart, which took over 4s on a
	// loaded CI machine.
	onB := startStream(t, b, 160)
	bDone := make(chan string, 1)
	go func() { bDone <- onB.rest() }()

	a.kill()
	if r := b.run(t, onA.runID); r.Status != runner.StatusRunning {
		t.Fatalf("A's run right after the kill: %s (nobody has recovered it yet)", r.Status)
	}
	spec := hostSpec{id: "host-a", dsn: dsn, listen: strings.TrimPrefix(a.url, "http://")}
	a2 := startHost(t, spec)
	r := a2.run(t, onA.runID)
	if r.Status != runner.StatusFailed || r.StatusReason != runner.ReasonInterrupted {
		t.Fatalf("A's run after A restarted: %s/%s, want failed/interrupted", r.Status, r.StatusReason)
	}
	if r := a2.run(t, onB.runID); r.Status != runner.StatusRunning {
		t.Fatalf("B's live run after A's recovery: %s/%s, want running", r.Status, r.StatusReason)
	}
	select {
	case out := <-bDone:
		if !strings.Contains(out, "[DONE]") {
			t.Fatalf("B's stream did not finish: %q", out)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("B's stream did not finish")
	}
	if r := a2.run(t, onB.runID); r.Status != runner.StatusCompleted {
		t.Fatalf("B's run: %s, want completed", r.Status)
	}
}

// Bad configuration is refused at start naming the field; a password in
// store.dsn draws a warning pointing to store.dsn_env.
func TestBadDatabaseConfigurationRefusedAtStart(t *testing.T) {
	dsn := pgtest.DSN(t)
	wrong := pgtest.WithParam(t, dsn, "password", "not-the-password")
	for name, spec := range map[string]hostSpec{
		"wrong password": {id: "h", dsn: wrong},
		"unreachable":    {id: "h", dsn: "postgres://postgres:pw@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=2"},
	} {
		t.Run(name, func(t *testing.T) {
			h := startProcess(t, spec)
			select {
			case <-h.exited:
			case <-time.After(30 * time.Second):
				t.Fatal("runedge started with a bad database")
			}
			errOut := h.stderr.String()
			if h.cmd.ProcessState.ExitCode() == 0 || !strings.Contains(errOut, "store.dsn_env (RUNEDGE_FLEET_DSN)") {
				t.Fatalf("exit %d, stderr does not name the field:\n%s", h.cmd.ProcessState.ExitCode(), errOut)
			}
			if strings.Contains(errOut, "not-the-password") {
				t.Fatalf("stderr shows the password:\n%s", errOut)
			}
		})
	}
	t.Run("password in store.dsn", func(t *testing.T) {
		h := startHost(t, hostSpec{id: "h", dsn: pgtest.Schema(t), inline: true})
		if errOut := h.stderr.String(); !strings.Contains(errOut, "store.dsn_env") || !strings.Contains(errOut, "level=WARN") {
			t.Fatalf("no warning pointing to store.dsn_env:\n%s", errOut)
		}
	})
}

// The database going away at run time: requests fail with 503
// unavailable (not 500), and succeed again once it is back.
func TestDatabaseGoneIsUnavailableAndRecovers(t *testing.T) {
	dsn := pgtest.Schema(t)
	relay := pgtest.NewRelay(t, dsn)
	h := startHost(t, hostSpec{id: "h", dsn: relay.DSN})
	post := func() (int, string) {
		res, err := h.do("POST", "/v1/chat/completions", `{"model":"service","messages":[{"role":"user","content":"hi"}]}`)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := post(); code != 200 {
		t.Fatalf("before: %d %s", code, body)
	}
	relay.Cut()
	code, body := post()
	var e struct {
		Error struct{ Type, Code string }
	}
	json.Unmarshal([]byte(body), &e)
	if code != http.StatusServiceUnavailable || e.Error.Code != "unavailable" {
		t.Fatalf("database gone: %d %s; want 503 unavailable", code, body)
	}
	relay.Restore()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		code, body := post()
		if code == 200 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("not recovered after the database came back: %d %s", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
