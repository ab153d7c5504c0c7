package fleet_test

import (
	"database/sql"
	be "encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the test reads the hosts' file

	"github.com/runedge/runedge/runner"
)

// A SQLite host killed with SIGKILL mid-stream and restarted on the same
// file with its id: the stream's run becomes failed/interrupted, found
// from the host's low-water mark (live_marks; the runs that ended before
// it raised the mark past them), and the runs that had ended keep their
// state.
func TestKilledSQLiteHostRecoversItsRun(t *testing.T) {
	spec := hostSpec{id: "host-s", sqlite: filepath.Join(t.TempDir(), "runs.db"), delay: 50 * time.Millisecond}
	h := startHost(t, spec)
	var done []string
	for range 3 {
		s := startStream(t, h, 2)
		if out := s.rest(); !strings.Contains(out, "[DONE]") {
			t.Fatalf("a short stream did not finish: %q", out)
		}
		done = append(done, s.runID)
	}
	live := startStream(t, h, 200) // ~10 s of tokens
	h.kill()

	spec.listen = strings.TrimPrefix(h.url, "http://")
	h2 := startHost(t, spec)
	if r := h2.run(t, live.runID); r.Status != runner.StatusFailed || r.StatusReason != runner.ReasonInterrupted {
		t.Fatalf("the killed stream's run after the restart: %s/%s, want failed/interrupted", r.Status, r.StatusReason)
	}
	for _, id := range done {
		if r := h2.run(t, id); r.Status != runner.StatusCompleted {
			t.Fatalf("run %s, ended before the kill: %s, want completed", id, r.Status)
		}
	}
	// The restarted host serves, and its runs end as before.
	s := startStream(t, h2, 2)
	if out := s.rest(); !strings.Contains(out, "[DONE]") {
		t.Fatalf("a stream after the restart did not finish: %q", out)
	}
	if r := h2.run(t, s.runID); r.Status != runner.StatusCompleted || r.HostID != "host-s" {
		t.Fatalf("the run after the restart: %s on %q", r.Status, r.HostID)
	}
}

// Two hosts on one SQLite file with 2 s leases under load from twelve
// clients (chat completions plain and streamed, responses plain and
// streamed chained by previous_response_id from one host to the other,
// background responses); host A is killed with SIGKILL mid-load and
// started again on the same file while the load goes on. Afterwards:
//   - every request got a full 200 but those A's death cut (their
//     connection dropped, their run failed/interrupted) and those sent to
//     A while it was down (no connection): no 5xx, no busy file;
//   - every run ended: foreground ones completed or (A's, cut)
//     failed/interrupted, background ones completed (A's taken over by B
//     or driven again by A at its restart);
//   - no host logged the file busy ("database is locked");
//   - a stored response reads back the same from either host;
//   - the file passes PRAGMA integrity_check once both hosts have stopped.
func TestTwoHostsOnOneSQLiteFileThroughAKill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	spec := func(id, listen string) hostSpec {
		return hostSpec{id: id, sqlite: path, runs: fastLeases, listen: listen}
	}
	a := startHost(t, spec("host-a", ""))
	b := startHost(t, spec("host-b", ""))
	var mu sync.Mutex
	hosts := []*host{a, b}
	current := func(i int) *host { mu.Lock(); defer mu.Unlock(); return hosts[i%2] }

	var (
		outsMu sync.Mutex
		outs   []outcome
	)
	stop := make(chan struct{})
	var load sync.WaitGroup
	for w := range 12 {
		load.Go(func() {
			prev := "" // the last stored response of this client's chain
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				h := current(w + n) // each next request on the other host
				chain := ""
				if prev != "" {
					chain = fmt.Sprintf(`,"previous_response_id":%q`, prev)
				}
				var o outcome
				switch (w + n) % 5 {
				case 0:
					o = post(h, "chat", "/v1/chat/completions", fmt.Sprintf(`{"model":"service","messages":[{"role":"user","content":%q}]}`, longText(10)))
				case 1:
					o = post(h, "chat-stream", "/v1/chat/completions", fmt.Sprintf(`{"model":"service","stream":true,"messages":[{"role":"user","content":%q}]}`, longText(20)))
				case 2:
					o = post(h, "responses", "/v1/responses", fmt.Sprintf(`{"model":"service","store":true,"input":%q%s}`, longText(10), chain))
				case 3:
					o = post(h, "responses-stream", "/v1/responses", fmt.Sprintf(`{"model":"service","store":true,"stream":true,"input":%q%s}`, longText(20), chain))
				default:
					o = post(h, "background", "/v1/responses", fmt.Sprintf(`{"model":"service","background":true,"input":%q}`, longText(40)))
				}
				if strings.HasPrefix(o.kind, "responses") {
					prev = ""
					if o.err == nil && o.code == 200 && o.done {
						prev = o.id
					}
				}
				outsMu.Lock()
				outs = append(outs, o)
				outsMu.Unlock()
				if o.err != nil || o.code >= 400 {
					time.Sleep(100 * time.Millisecond) // no busy loop on a host that is down
				}
			}
		})
	}

	time.Sleep(2 * time.Second)
	killedAt := time.Now()
	a.kill()
	time.Sleep(time.Second)
	a2 := startHost(t, spec("host-a", strings.TrimPrefix(a.url, "http://")))
	mu.Lock()
	hosts[0] = a2
	mu.Unlock()
	t.Logf("A back %s after the kill", time.Since(killedAt))
	time.Sleep(2 * time.Second)
	close(stop)
	load.Wait()

	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	waitSettled(t, func(q string) (live int, err error) {
		err = db.QueryRow(q).Scan(&live)
		return live, err
	})
	runs := map[string]storedRun{}
	rows, err := db.Query(`SELECT id, status, status_reason, host_id, COALESCE(lease_token, 0) FROM runs`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r storedRun
		if err := rows.Scan(&r.id, &r.status, &r.reason, &r.host, &r.lease); err != nil {
			t.Fatal(err)
		}
		runs[r.id] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}

	known := map[string]bool{}
	cutOnA := 0
	counts, categories := map[string]int{}, map[string]int{}
	var stored []string
	for _, o := range outs {
		counts[o.kind]++
		r, inStore := heardRun(t, o, runs, known)
		if !inStore {
			continue
		}
		want := runner.StatusCompleted
		var cat string
		switch ok := o.err == nil && o.code == 200 && o.done; {
		case ok && o.runID == "":
			cat = "no run id"
			t.Errorf("%s: no run id", o)
		case ok:
			cat = "ok"
			if r.status != string(want) {
				t.Errorf("%s: answered in full but its run is %s/%s", o, r.status, r.reason)
			}
			if strings.HasPrefix(o.kind, "responses") {
				stored = append(stored, o.id)
			}
		case o.h == a && o.sent.Before(killedAt):
			cat = "cut by A's death"
			if o.code != 0 && o.code != 200 {
				t.Errorf("%s: refused by host A before its death", o)
			}
			switch {
			case o.runID == "":
				cutOnA++
			case o.kind == "background":
				if r.status != string(want) {
					t.Errorf("%s: A's background run is %s/%s, want completed", o, r.status, r.reason)
				}
			case r.status != string(runner.StatusFailed) || r.reason != runner.ReasonInterrupted:
				t.Errorf("%s: cut by A's death, its run is %s/%s, want failed/interrupted", o, r.status, r.reason)
			}
		case o.h == a:
			cat = "A down"
			if o.err == nil || o.runID != "" {
				t.Errorf("%s: sent to host A after its death", o)
			}
		default:
			cat = "wrong"
			t.Errorf("%s: not what its outcome calls for (A killed %s)", o, killedAt.Format("15:04:05.000"))
		}
		categories[cat]++
	}
	takenOver := 0
	for _, r := range runs {
		if r.lease > 1 {
			takenOver++
		}
	}
	checkUnheardRuns(t, runs, known, cutOnA)
	t.Logf("requests: %v; outcomes: %v; %d runs, %d taken over, %d stored responses", counts, categories, len(runs), takenOver, len(stored))
	if categories["cut by A's death"] == 0 || categories["ok"] == 0 {
		t.Errorf("the kill hit no request, or nothing succeeded: nothing was tested")
	}

	// A stored response reads back the same from either host.
	for i, id := range stored {
		if i == 40 {
			break
		}
		var bodies [2]string
		for j, h := range []*host{a2, b} {
			res, err := h.do("GET", "/v1/responses/"+id, "")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				t.Fatalf("GET stored response %s on %s: %d %s", id, h.id, res.StatusCode, body)
			}
			bodies[j] = string(body)
		}
		if bodies[0] != bodies[1] {
			t.Errorf("stored response %s reads differently on the two hosts:\n%s\n%s", id, bodies[0], bodies[1])
		}
	}

	// For the record: the log's size and how often it started over (its
	// header's checkpoint sequence).
	if wal, err := os.ReadFile(path + "-wal"); err == nil && len(wal) >= 16 {
		t.Logf("WAL %d bytes, started over %d times", len(wal), be.BigEndian.Uint32(wal[12:]))
	}
	for _, h := range []*host{a2, b} {
		h.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-h.exited:
		case <-time.After(15 * time.Second):
			t.Fatalf("%s did not exit within 15 s of SIGTERM", h.id)
		}
		if c := h.cmd.ProcessState.ExitCode(); c != 0 {
			t.Errorf("%s exited %d after SIGTERM", h.id, c)
		}
	}
	for _, h := range []*host{a, a2, b} {
		if log := h.stderr.String(); strings.Contains(log, "database is locked") || strings.Contains(log, "SQLITE_BUSY") {
			t.Errorf("%s logged the file busy:\n%s", h.id, lastLines(log, 30))
		}
	}
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check: %q %v", check, err)
	}
	if t.Failed() {
		for _, h := range []*host{a, a2, b} {
			t.Logf("%s stderr:\n%s", h.id, lastLines(h.stderr.String(), 30))
		}
	}
}
