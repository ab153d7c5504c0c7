package fleet_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/jackc/pgx/v5"
	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/postgres/pgtest"
)

// outcome is what one request (or one WebSocket turn) of the mixed load
// got.
type outcome struct {
	kind  string
	h     *host // the process it was sent to (a restarted host is another)
	sent  time.Time
	ended time.Time
	err   error  // a transport error, or a reply or socket cut short
	code  int    // the HTTP status (101 for a socket's turns)
	ecode string // the error code of a refusal
	runID string // from x-service-run-id, or a turn's metadata.service.run_id
	done  bool   // the whole reply came: a body, [DONE], response.completed
	id    string // the reply's id (a response's, from its body or response.completed)
}

func (o outcome) String() string {
	return fmt.Sprintf("%s on %s sent %s: %d %s run %q done %t err %v", o.kind, o.h.id, o.sent.Format("15:04:05.000"), o.code, o.ecode, o.runID, o.done, o.err)
}

// post sends one compatible request to h and reads its reply to the end.
func post(h *host, kind, path, body string) (o outcome) {
	o = outcome{kind: kind, h: h, sent: time.Now()}
	defer func() { o.ended = time.Now() }()
	res, err := h.do("POST", path, body)
	if err != nil {
		o.err = err
		return o
	}
	defer res.Body.Close()
	o.code, o.runID = res.StatusCode, res.Header.Get("X-Service-Run-Id")
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		o.ecode = gjson.GetBytes(b, "error.code").Str
		return o
	}
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(res.Body)
		o.err = err
		o.id = gjson.GetBytes(b, "id").Str
		o.done = err == nil && gjson.ValidBytes(b) && o.id != ""
		return o
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if ok && (data == "[DONE]" || gjson.Get(data, "type").Str == "response.completed") {
			o.done = true
			if data != "[DONE]" {
				o.id = gjson.Get(data, "response.id").Str
			}
		}
	}
	o.err = sc.Err()
	if o.err == nil && !o.done {
		o.err = io.ErrUnexpectedEOF
	}
	return o
}

// socketTurns opens a WebSocket on h and runs two turns, the second
// continuing the first by previous_response_id; one outcome per turn
// sent (a dial that failed is one outcome).
func socketTurns(h *host, words int) []outcome {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := outcome{kind: "socket", h: h, sent: time.Now()}
	c, res, err := websocket.Dial(ctx, "ws://"+strings.TrimPrefix(h.url, "http://")+"/v1/responses",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		o.err = err
		if res != nil {
			o.code = res.StatusCode
		}
		return []outcome{o}
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	var outs []outcome
	prev := ""
	for turn := range 2 {
		o := outcome{kind: "socket", h: h, sent: time.Now(), code: http.StatusSwitchingProtocols}
		ev := fmt.Sprintf(`{"type":"response.create","model":"service","input":%q%s}`, longText(words), prev)
		if o.err = c.Write(ctx, websocket.MessageText, []byte(ev)); o.err != nil {
			return append(outs, o)
		}
		for !o.done && o.err == nil {
			_, msg, err := c.Read(ctx)
			if err != nil {
				o.err = err
				break
			}
			ev := gjson.ParseBytes(msg)
			switch ev.Get("type").Str {
			case "response.created":
				o.runID = ev.Get("response.metadata.service.run_id").Str
			case "response.completed":
				o.done = true
				prev = `,"previous_response_id":"` + ev.Get("response.id").Str + `"`
			case "error", "response.failed", "response.incomplete":
				o.ecode = ev.Get("error.code").Str
				o.err = fmt.Errorf("turn %d ended %s", turn, msg)
			}
		}
		o.ended = time.Now()
		outs = append(outs, o)
		if o.err != nil {
			return outs
		}
	}
	c.Close(websocket.StatusNormalClosure, "")
	return outs
}

// terminalWritesSQL records, in the test's schema, every write that makes
// a run terminal and every write to a run that already was: a second
// terminal write (or any change to an ended run) shows as a row whose
// old_status is terminal.
const terminalWritesSQL = `
CREATE TABLE terminal_writes (run_id TEXT, op TEXT, old_status TEXT, new_status TEXT, reason TEXT);
CREATE FUNCTION note_terminal_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.status IN ('completed', 'failed', 'cancelled')
		OR (TG_OP = 'UPDATE' AND OLD.status IN ('completed', 'failed', 'cancelled')) THEN
		INSERT INTO terminal_writes VALUES (NEW.id, TG_OP,
			CASE WHEN TG_OP = 'UPDATE' THEN OLD.status END, NEW.status, NEW.status_reason);
	END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER note_terminal_write AFTER INSERT OR UPDATE ON runs
	FOR EACH ROW EXECUTE FUNCTION note_terminal_write();`

// storedRun is a run as its row has it.
type storedRun struct {
	id, status, reason, host string
	ended                    *int64
	output                   string
	lease                    int64 // the fencing token: above 1 after a takeover
}

func readRuns(t *testing.T, db *pgx.Conn) map[string]storedRun {
	t.Helper()
	rows, err := db.Query(t.Context(), `SELECT id, status, status_reason, host_id, ended_at, md5(output), lease_token FROM runs`)
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]storedRun{}
	for rows.Next() {
		var r storedRun
		if err := rows.Scan(&r.id, &r.status, &r.reason, &r.host, &r.ended, &r.output, &r.lease); err != nil {
			t.Fatal(err)
		}
		all[r.id] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return all
}

// liveRunsSQL counts the runs not yet ended.
const liveRunsSQL = `SELECT count(*) FROM runs WHERE status IN ('queued', 'running')`

// waitSettled waits up to 20 s for no run to be queued or running, asking
// count (the test's own database handle) with liveRunsSQL.
func waitSettled(t *testing.T, count func(query string) (int, error)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		live, err := count(liveRunsSQL)
		if err != nil {
			t.Fatal(err)
		}
		if live == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d runs still queued or running 20 s after the load ended", live)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// heardRun notes o's run id among those the clients heard of (known),
// failing on one given to two requests, and returns its stored run; ok is
// false when the id names no stored run (an error too).
func heardRun(t *testing.T, o outcome, runs map[string]storedRun, known map[string]bool) (r storedRun, ok bool) {
	t.Helper()
	if o.runID == "" {
		return storedRun{}, true
	}
	if known[o.runID] {
		t.Errorf("run id %s given to two requests", o.runID)
	}
	known[o.runID] = true
	r, ok = runs[o.runID]
	if !ok {
		t.Errorf("%s: its run is not in the store", o)
	}
	return r, ok
}

// checkUnheardRuns holds the stored runs to the run ids the clients heard
// of and the requests cut on a killed host before their ids reached the
// client (cutOnA): no fewer runs than ids, no more than the cut requests
// besides, and each run nobody heard of, made by such a request, either
// interrupted (foreground) or driven again to its end (background).
func checkUnheardRuns(t *testing.T, runs map[string]storedRun, known map[string]bool, cutOnA int) {
	t.Helper()
	if len(runs) < len(known) || len(runs)-len(known) > cutOnA {
		t.Errorf("%d runs for %d run ids the clients got and %d requests cut on A", len(runs), len(known), cutOnA)
	}
	for id, r := range runs {
		if known[id] {
			continue
		}
		if r.status != string(runner.StatusCompleted) && (r.status != string(runner.StatusFailed) || r.reason != runner.ReasonInterrupted) {
			t.Errorf("run %s, made by a request cut on A: %s/%s", id, r.status, r.reason)
		}
	}
}

// The fleet check: three hosts on one PostgreSQL with 2 s leases under
// mixed load from six clients spread over all three (chat completions and
// responses, plain and streamed, background responses, WebSocket turns);
// host A is killed with SIGKILL and host B sent SIGTERM mid-load, and both
// start again while the load goes on. Afterwards:
//   - every background run is completed (or failed with max_drives);
//   - no run stays running for long after its lease ran out (sampled
//     throughout), and none is running at the end;
//   - every request got what its outcome calls for: host C and the
//     restarted hosts answer everything 200 in full; a request cut by A's
//     death has a run that ended failed/interrupted (or made no run the
//     client heard of, counted below); every request B had begun before
//     SIGTERM finishes in full within the grace, and those after are
//     refused (503 unavailable, or no connection) without a run;
//   - no run was written terminal twice, or changed after it ended (a
//     trigger on the runs table records every such write; the runs read
//     twice agree);
//   - the runs are the requests that got a run id, plus at most one per
//     request cut by A's death before its reply's headers came.
func TestMixedLoadThroughAKillAndADeploy(t *testing.T) {
	dsn := pgtest.Schema(t)
	spec := func(id, listen string) hostSpec {
		return hostSpec{id: id, dsn: dsn, runs: fastLeases, listen: listen}
	}
	var mu sync.Mutex
	hosts := []*host{startHost(t, spec("host-a", "")), startHost(t, spec("host-b", "")), startHost(t, spec("host-c", ""))}
	current := func(i int) *host { mu.Lock(); defer mu.Unlock(); return hosts[i] }

	db, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	if _, err := db.Exec(t.Context(), terminalWritesSQL); err != nil {
		t.Fatal(err)
	}

	// A run whose lease ran out is taken over at the next tick of a live
	// host (500 ms): one seen running with the same expired lease for
	// 2.5 s is stranded.
	stranded := make(chan string, 16)
	sampler, err := pgx.Connect(t.Context(), dsn) // a pgx.Conn is one goroutine's
	if err != nil {
		t.Fatal(err)
	}
	defer sampler.Close(context.Background())
	stopSampling := make(chan struct{})
	var sampling sync.WaitGroup
	sampling.Go(func() {
		first := map[string]time.Time{}
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
			rows, err := sampler.Query(context.Background(), `SELECT id || '/' || lease_token FROM runs
				WHERE status IN ('queued', 'running') AND COALESCE(lease_expires, 0) < $1`, time.Now().UnixMilli())
			if err != nil {
				stranded <- err.Error()
				return
			}
			keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				stranded <- err.Error()
				return
			}
			now := time.Now()
			seen := map[string]time.Time{}
			for _, k := range keys {
				if at, ok := first[k]; ok {
					seen[k] = at
					if now.Sub(at) > 2500*time.Millisecond {
						select {
						case stranded <- fmt.Sprintf("run/lease %s running %s after its lease ran out", k, now.Sub(at)):
						default:
						}
					}
				} else {
					seen[k] = now
				}
			}
			first = seen
		}
	})

	kinds := []func(h *host) []outcome{
		func(h *host) []outcome {
			return []outcome{post(h, "chat", "/v1/chat/completions", fmt.Sprintf(`{"model":"service","messages":[{"role":"user","content":%q}]}`, longText(15)))}
		},
		func(h *host) []outcome {
			return []outcome{post(h, "chat-stream", "/v1/chat/completions", fmt.Sprintf(`{"model":"service","stream":true,"messages":[{"role":"user","content":%q}]}`, longText(25)))}
		},
		func(h *host) []outcome {
			return []outcome{post(h, "responses", "/v1/responses", fmt.Sprintf(`{"model":"service","input":%q}`, longText(15)))}
		},
		func(h *host) []outcome {
			return []outcome{post(h, "responses-stream", "/v1/responses", fmt.Sprintf(`{"model":"service","stream":true,"input":%q}`, longText(25)))}
		},
		func(h *host) []outcome {
			return []outcome{post(h, "background", "/v1/responses", fmt.Sprintf(`{"model":"service","background":true,"input":%q}`, longText(40)))}
		},
		func(h *host) []outcome { return socketTurns(h, 12) },
	}
	var (
		outsMu sync.Mutex
		outs   []outcome
	)
	stop := make(chan struct{})
	var load sync.WaitGroup
	for w := range 6 {
		load.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				got := kinds[(w+n)%len(kinds)](current(w % 3))
				outsMu.Lock()
				outs = append(outs, got...)
				outsMu.Unlock()
				if o := got[len(got)-1]; o.err != nil || o.code >= 400 || o.kind == "background" {
					time.Sleep(100 * time.Millisecond) // no busy loop on a host that is down
				}
			}
		})
	}

	time.Sleep(2 * time.Second)
	a, b := hosts[0], hosts[1]
	killedAt := time.Now()
	a.kill()
	termAt := time.Now()
	b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(15 * time.Second):
		t.Fatal("host B did not exit within 15 s of SIGTERM (grace 10 s)")
	}
	t.Logf("host B exited %s after SIGTERM", time.Since(termAt))
	if b.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("host B exited %d after SIGTERM: %s", b.cmd.ProcessState.ExitCode(), b.stderr.String())
	}
	time.Sleep(time.Second) // A's leases run out, C takes them over
	a2 := startHost(t, spec("host-a", strings.TrimPrefix(a.url, "http://")))
	b2 := startHost(t, spec("host-b", strings.TrimPrefix(b.url, "http://")))
	mu.Lock()
	hosts[0], hosts[1] = a2, b2
	mu.Unlock()
	t.Logf("A and B back %s after the kill", time.Since(killedAt))
	time.Sleep(2 * time.Second)
	close(stop)
	load.Wait()

	// Everything settles: no run left queued or running.
	waitSettled(t, func(q string) (live int, err error) {
		err = db.QueryRow(t.Context(), q).Scan(&live)
		return live, err
	})
	close(stopSampling)
	sampling.Wait()
	close(stranded)
	for s := range stranded {
		t.Error(s)
	}

	runs := readRuns(t, db)
	known := map[string]bool{}
	cutOnA := 0 // requests cut by A's death before their run id reached the client
	counts, categories := map[string]int{}, map[string]int{}
	for _, o := range outs {
		counts[o.kind]++
		r, inStore := heardRun(t, o, runs, known)
		if !inStore {
			continue
		}
		ok := o.err == nil && o.code == 200 && o.done
		if o.kind == "socket" {
			ok = o.err == nil && o.done
		}
		var cat string
		switch {
		case ok && o.runID == "":
			cat = "no run id"
			t.Errorf("%s: no run id", o)
		case ok && o.kind == "background":
			cat = "ok"
			if r.status != string(runner.StatusCompleted) && (r.status != string(runner.StatusFailed) || r.reason != runner.ReasonMaxDrives) {
				t.Errorf("%s: background run %s/%s, want completed (or failed/max_drives)", o, r.status, r.reason)
			}
		case ok:
			cat = "ok"
			if o.h == b && o.sent.Before(termAt) && o.ended.After(termAt) {
				cat = "finished by draining B"
			}
			if r.status != string(runner.StatusCompleted) {
				t.Errorf("%s: answered in full but its run is %s/%s", o, r.status, r.reason)
			}
		case o.h == a && o.sent.Before(killedAt):
			cat = "cut by A's death"
			// Cut by the kill: a foreground run whose client has gone.
			if o.code != 0 && o.code != 200 && o.code != http.StatusSwitchingProtocols {
				t.Errorf("%s: refused by host A before its death", o)
			}
			if o.runID == "" {
				cutOnA++
			} else if r.status != string(runner.StatusFailed) || r.reason != runner.ReasonInterrupted {
				t.Errorf("%s: cut by A's death, its run is %s/%s, want failed/interrupted", o, r.status, r.reason)
			}
		case o.h == a:
			cat = "A down"
			// Sent to A while it was dead: no connection.
			if o.err == nil || o.runID != "" {
				t.Errorf("%s: sent to host A after its death", o)
			}
		case o.h == b && o.code == http.StatusServiceUnavailable && o.ecode == "unavailable" && o.runID == "" && !o.sent.Before(termAt.Add(-time.Second)):
			cat = "refused by draining B"
		case o.h == b && o.err != nil && o.runID == "" && o.code != http.StatusSwitchingProtocols && !o.sent.Before(termAt.Add(-100*time.Millisecond)):
			// B's listener had closed (a request racing SIGTERM by a
			// hair may find its connection closed too).
			cat = "B closed"
		case o.h == b && o.kind == "socket" && o.runID == "" && o.err != nil && !o.sent.Before(termAt.Add(-100*time.Millisecond)):
			// The next turn on a socket B closed (1001) after its turn
			// in flight finished.
			cat = "B closed"
		default:
			cat = "wrong"
			t.Errorf("%s: not what its outcome calls for (A killed %s, B sent SIGTERM %s)", o,
				killedAt.Format("15:04:05.000"), termAt.Format("15:04:05.000"))
		}
		categories[cat]++
	}
	takenOver := 0
	for _, r := range runs {
		if r.lease > 1 {
			takenOver++
		}
	}
	t.Logf("requests: %v; outcomes: %v; %d runs, %d with a run id a client got, %d requests cut on A before their headers, %d runs taken over",
		counts, categories, len(runs), len(known), cutOnA, takenOver)
	if takenOver == 0 || categories["cut by A's death"] == 0 {
		t.Errorf("the kill and the SIGTERM hit no run: nothing was tested")
	}
	checkUnheardRuns(t, runs, known, cutOnA)
	if counts["socket"] == 0 || counts["background"] == 0 || counts["chat-stream"] == 0 {
		t.Errorf("the load missed a kind: %v", counts)
	}

	// One terminal write per run, and nothing written to a run after it.
	rows, err := db.Query(t.Context(), `SELECT run_id, op, COALESCE(old_status, ''), new_status, reason FROM terminal_writes`)
	if err != nil {
		t.Fatal(err)
	}
	writes := map[string]int{}
	for rows.Next() {
		var id, op, from, to, reason string
		if err := rows.Scan(&id, &op, &from, &to, &reason); err != nil {
			t.Fatal(err)
		}
		writes[id]++
		if runner.Status(from).Terminal() {
			t.Errorf("run %s written after it ended: %s %s → %s/%s", id, op, from, to, reason)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for id, r := range runs {
		if writes[id] != 1 {
			t.Errorf("run %s (%s/%s): %d terminal writes, want 1", id, r.status, r.reason, writes[id])
		}
	}
	time.Sleep(time.Second)
	for id, again := range readRuns(t, db) {
		first := runs[id]
		if again.status != first.status || again.reason != first.reason || again.output != first.output ||
			again.ended == nil || first.ended == nil || *again.ended != *first.ended {
			t.Errorf("run %s changed after it ended: %+v then %+v", id, first, again)
		}
	}
	if t.Failed() {
		for _, h := range []*host{a, b} {
			t.Logf("%s (first process) stderr:\n%s", h.id, lastLines(h.stderr.String(), 30))
		}
	}
}

// lastLines is the end of a log.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
