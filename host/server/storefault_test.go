package server

import (
	"context"
	"database/sql"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/config/configtest"
	"github.com/runedge/runedge/internal/logbuf"
	"github.com/runedge/runedge/runner"
)

// driverText is what a failing store write says. It names a file, as a
// driver's error may: none of it may reach a client.
const driverText = "disk I/O error on /var/lib/secret/runs.db"

// failWrites makes the server's own SQLite file refuse a write: a trigger,
// installed through a second connection, aborts it with driverText, so the
// store sees a real driver error. It returns a func that removes it.
func failWrites(t *testing.T, h *harness, name, trigger string) func() {
	t.Helper()
	db, err := sql.Open("sqlite", h.cfg.Path(h.cfg.Store.Path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TRIGGER "+name+" "+trigger+
		" BEGIN SELECT RAISE(ABORT, '"+driverText+"'); END"); err != nil {
		t.Fatal(err)
	}
	return func() {
		if _, err := db.ExecContext(ctx, "DROP TRIGGER "+name); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStoreWriteFailureIsGeneric: when the run store fails a write, the
// client gets the OpenAI error shape, 500 run_failed, and a generic message
// with the run id to quote — never the driver's text, whatever the run's
// own outcome was. The run that started stays on record and the failure is
// in the log under its id.
func TestStoreWriteFailureIsGeneric(t *testing.T) {
	cfg := configtest.New(t)
	cfg.Tokens = []config.Token{{Name: "ops", Hash: auth.HashToken(tokAdmin), Admin: true},
		{Name: "app", Hash: auth.HashToken(tokApp)}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	logs := &logbuf.Buffer{}
	h := serveConfigLog(t, cfg, logs)

	noDetail := func(t *testing.T, b []byte, runID string) {
		t.Helper()
		msg := gjson.GetBytes(b, "error.message").Str
		for _, leak := range []string{"disk I/O", "/var/lib/secret", "sqlite", "SQL", "record outcome", "offline provider"} {
			if strings.Contains(msg, leak) {
				t.Fatalf("the client sees %q: %s", leak, b)
			}
		}
		if runID != "" && !strings.Contains(msg, runID) {
			t.Fatalf("message %q lacks the run id %s", msg, runID)
		}
	}
	logged := func(t *testing.T, runID string) {
		t.Helper()
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, runID) && strings.Contains(line, driverText) {
				return
			}
		}
		t.Fatalf("no log line names run %s with the store's error:\n%s", runID, logs.String())
	}
	recorded := func(t *testing.T, runID string) {
		t.Helper()
		if r := h.run(runID); r.Status != runner.StatusRunning {
			t.Fatalf("run %s recorded %s, want it kept as running (its end could not be written)", runID, r.Status)
		}
	}

	for _, c := range []struct {
		name, status, body string
	}{
		// A provider failure whose outcome cannot be recorded: the
		// provider's message is for clients, the store's is not.
		{"failed outcome", "failed", `{"model":"service","messages":[{"role":"user","content":"/fail"}]}`},
		{"completed outcome", "completed", chatBody},
		{"completed outcome, streamed", "completed", `{"model":"service","stream":true,"messages":[{"role":"user","content":"hello"}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer failWrites(t, h, "fail_end", "BEFORE UPDATE OF status ON runs WHEN NEW.status = '"+c.status+"'")()
			res := h.do("POST", "/v1/chat/completions", c.body)
			id := checkRunHeaders(t, res.Header)
			if strings.Contains(c.body, `"stream":true`) {
				// The stream started before the end was written: the
				// error comes as its last event.
				if res.StatusCode != http.StatusOK {
					t.Fatalf("status %d: %s", res.StatusCode, body(t, res))
				}
				evs := readEvents(t, res.Body)
				res.Body.Close()
				last := evs[len(evs)-1].Data
				if gjson.Get(last, "error.code").Str != "run_failed" || gjson.Get(last, "error.type").Str != "server_error" {
					t.Fatalf("last event %s", last)
				}
				noDetail(t, []byte(last), id)
			} else {
				b := wantError(t, res, http.StatusInternalServerError, "server_error", "run_failed")
				noDetail(t, b, id)
			}
			recorded(t, id)
			logged(t, id)
		})
	}

	t.Run("start not recorded", func(t *testing.T) {
		defer failWrites(t, h, "fail_start", "BEFORE INSERT ON runs")()
		res := h.do("POST", "/v1/chat/completions", chatBody)
		if id := res.Header.Get("X-Service-Run-Id"); id != "" {
			t.Fatalf("a run id %s for a run that was never created", id)
		}
		// No run exists, so no run id to quote: the edge's generic 500.
		b := wantError(t, res, http.StatusInternalServerError, "server_error", "internal_error")
		noDetail(t, b, "")
		if !strings.Contains(logs.String(), driverText) {
			t.Fatalf("the store's error is not in the log:\n%s", logs.String())
		}
	})

	// And the store is fine again once the fault is gone.
	if res := h.do("POST", "/v1/chat/completions", chatBody); res.StatusCode != 200 {
		t.Fatalf("after the faults: %d %s", res.StatusCode, body(t, res))
	}
}
