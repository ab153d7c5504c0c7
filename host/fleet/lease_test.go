package fleet_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/postgres/pgtest"
)

// fastLeases: a dead host's runs are taken over within about 2.5 s.
const fastLeases = "  lease: 2s\n  lease_renew: 500ms\n"

// startBackground starts a background response of about words tokens on
// h and returns its run id.
func startBackground(t *testing.T, h *host, words int, stream bool) string {
	t.Helper()
	body := fmt.Sprintf(`{"model":"service","background":true,"stream":%t,"input":%q}`, stream, longText(words))
	res, err := h.do("POST", "/v1/responses", body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		t.Fatalf("background response on %s: %d %s", h.id, res.StatusCode, b)
	}
	id := res.Header.Get("X-Service-Run-Id")
	if stream {
		go io.Copy(io.Discard, res.Body) // its creator reads on; the host dies under it
	} else {
		res.Body.Close()
	}
	if id == "" {
		t.Fatal("no X-Service-Run-Id header")
	}
	return id
}

// waitEnded polls run id on h until it is no longer running.
func waitEnded(t *testing.T, h *host, id string, within time.Duration) runner.Run {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r := h.run(t, id)
		if r.Status.Terminal() {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s still %s on %q after %s", id, r.Status, r.HostID, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// follow reads a background response's stream on h from the start
// (GET /v1/responses/{id}?stream=true), or after event after when it is
// not negative (&starting_after=), and returns its events' types, the
// last event's data, and the text of the deltas after the last
// response.output_item.added (the last attempt's).
func follow(t *testing.T, h *host, runID string, after int) (types []string, last, deltas string, err error) {
	path := "/v1/responses/" + contract.ResponseID(runID) + "?stream=true"
	if after >= 0 {
		path += fmt.Sprintf("&starting_after=%d", after)
	}
	res, err := h.do("GET", path, "")
	if err != nil {
		return nil, "", "", err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		return nil, "", "", fmt.Errorf("follow on %s: %d %s", h.id, res.StatusCode, b)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	lines := 0
	defer func() {
		if len(types) == 0 {
			err = fmt.Errorf("no events in %d lines (%v): %v %s", lines, res.Header, sc.Err(), last)
		}
	}()
	for sc.Scan() {
		lines++
		if len(types) == 0 && !strings.HasPrefix(sc.Text(), "data: ") {
			last += sc.Text() + "\n"
		}
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev struct {
				Type  string `json:"type"`
				Delta string `json:"delta"`
			}
			json.Unmarshal([]byte(data), &ev)
			types = append(types, ev.Type)
			last = data
			switch ev.Type {
			case "response.output_item.added":
				deltas = ""
			case "response.output_text.delta":
				deltas += ev.Delta
			}
		}
	}
	return types, last, deltas, sc.Err()
}

// Three hosts on one PostgreSQL: host A is killed with SIGKILL and host B
// is sent SIGTERM while both run background responses. Every background
// run is completed by a live host (A's after their leases ran out, B's at
// once, handed off), a foreground stream of A's ends failed/interrupted
// instead of staying running, a reader following one of A's streams on
// host C sees it to its end with the output of the attempt that finished,
// and no run is left running.
func TestBackgroundRunsOutliveTheirHosts(t *testing.T) {
	dsn := pgtest.Schema(t)
	spec := func(id string) hostSpec {
		return hostSpec{id: id, dsn: dsn, delay: 40 * time.Millisecond, runs: fastLeases}
	}
	a, b, c := startHost(t, spec("host-a")), startHost(t, spec("host-b")), startHost(t, spec("host-c"))
	var onA, onB []string
	for range 4 {
		onA = append(onA, startBackground(t, a, 60, false))
		onB = append(onB, startBackground(t, b, 60, false))
	}
	streamed := startBackground(t, a, 60, true)
	onA = append(onA, streamed)
	fg := startStream(t, a, 200)
	type followed struct {
		types        []string
		last, deltas string
		err          error
	}
	reader, resumed := make(chan followed, 1), make(chan followed, 1)
	go func() {
		types, last, deltas, err := follow(t, c, streamed, -1)
		reader <- followed{types, last, deltas, err}
	}()
	// Long enough for host A to have stored some of the stream's events
	// (a batch every 16 events at most 200 ms apart).
	time.Sleep(1200 * time.Millisecond)

	killed := time.Now()
	a.kill()
	b.cmd.Process.Signal(syscall.SIGTERM)
	// A reader resuming, as the SDKs resume, after the host died.
	go func() {
		types, last, deltas, err := follow(t, c, streamed, 2)
		resumed <- followed{types, last, deltas, err}
	}()
	select {
	case <-b.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("host B did not exit after SIGTERM")
	}
	handedOff := time.Since(killed)
	// B released its background runs' leases as it stopped: host C takes
	// them at its next tick (500 ms), well before a 2 s lease would run out.
	exited := time.Now()
	for _, id := range onB {
		for c.run(t, id).HostID != "host-c" {
			if time.Since(exited) > 1500*time.Millisecond {
				t.Fatalf("B's run %s not taken over within 1.5 s of B's exit: not handed off", id)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("B's runs on host-c %s after B exited", time.Since(exited))

	for _, id := range onB {
		r := waitEnded(t, c, id, 15*time.Second)
		if r.Status != runner.StatusCompleted || r.HostID != "host-c" {
			t.Fatalf("B's background run %s: %s/%s on %q, want completed on host-c", id, r.Status, r.StatusReason, r.HostID)
		}
	}
	for _, id := range onA {
		r := waitEnded(t, c, id, 20*time.Second)
		if r.Status != runner.StatusCompleted || r.HostID != "host-c" {
			t.Fatalf("A's background run %s: %s/%s on %q, want completed on host-c", id, r.Status, r.StatusReason, r.HostID)
		}
	}
	r := waitEnded(t, c, fg.runID, 10*time.Second)
	if r.Status != runner.StatusFailed || r.StatusReason != runner.ReasonInterrupted {
		t.Fatalf("A's foreground stream: %s/%s, want failed/interrupted", r.Status, r.StatusReason)
	}
	t.Logf("B exited %s after SIGTERM; A's runs taken over within %s of the kill", handedOff, time.Since(killed))

	// The readers on host C followed the run to its end: the new
	// attempt's events (re-driven on C) after the first attempt's, then
	// response.completed with the new attempt's output.
	for i, ch := range []chan followed{reader, resumed} {
		select {
		case f := <-ch:
			checkFollowed(t, i, f.types, f.last, f.deltas, f.err)
		case <-time.After(20 * time.Second):
			t.Fatalf("reader %d on host C did not see the run end", i)
		}
	}
	// A and B come back; nothing of theirs is running any more.
	a2 := startHost(t, hostSpec{id: "host-a", dsn: dsn, runs: fastLeases, listen: strings.TrimPrefix(a.url, "http://")})
	res, err := a2.do("GET", "/runner/v1/runs?status=running&limit=100", "")
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Data []runner.Run `json:"data"`
	}
	json.NewDecoder(res.Body).Decode(&page)
	res.Body.Close()
	if len(page.Data) != 0 {
		t.Fatalf("%d runs still running after the takeovers: %+v", len(page.Data), page.Data)
	}
}

// A single SQLite host killed with background responses in flight drives
// them again at its next start: they complete.
func TestKilledSQLiteHostFinishesItsBackgroundRuns(t *testing.T) {
	spec := hostSpec{id: "host-s", sqlite: filepath.Join(t.TempDir(), "runs.db"), delay: 40 * time.Millisecond}
	h := startHost(t, spec)
	var ids []string
	for range 3 {
		ids = append(ids, startBackground(t, h, 100, false))
	}
	time.Sleep(300 * time.Millisecond)
	h.kill()
	spec.listen = strings.TrimPrefix(h.url, "http://")
	h2 := startHost(t, spec)
	for _, id := range ids {
		if r := waitEnded(t, h2, id, 20*time.Second); r.Status != runner.StatusCompleted {
			t.Fatalf("background run %s after the restart: %s/%s, want completed", id, r.Status, r.StatusReason)
		}
	}
}

// checkFollowed checks what reader i of a run re-driven after a takeover
// saw: the new attempt's message events after those the first attempt
// stored, then response.completed whose text is the new attempt's deltas.
func checkFollowed(t *testing.T, i int, types []string, last, deltas string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("reader %d: %v", i, err)
	}
	if i == 0 && (len(types) == 0 || types[0] != "response.created") {
		t.Fatalf("reader %d from the start saw %v, want response.created first", i, types)
	}
	if i == 1 && len(types) > 0 && types[0] == "response.created" {
		t.Fatalf("reader %d after event 2 saw %v, from response.created", i, types)
	}
	added := slices.Index(types, "response.output_item.added")
	lastAdded := added
	for j, ty := range types {
		if ty == "response.output_item.added" {
			lastAdded = j
		}
	}
	if added < 0 {
		t.Fatalf("reader %d saw no message item: %v", i, types)
	}
	tail := types[lastAdded:]
	want := []string{"response.output_item.added", "response.content_part.added", "response.output_text.delta"}
	wantEnd := []string{"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if len(tail) < len(want)+len(wantEnd) || !slices.Equal(tail[:len(want)], want) || !slices.Equal(tail[len(tail)-len(wantEnd):], wantEnd) {
		t.Fatalf("reader %d: the last attempt's events %v, want %v, deltas, %v", i, tail, want, wantEnd)
	}
	var ev struct {
		Response struct {
			Status string `json:"status"`
			Output []struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"output"`
		} `json:"response"`
	}
	if err := json.Unmarshal([]byte(last), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Response.Status != "completed" || len(ev.Response.Output) != 1 || !strings.Contains(ev.Response.Output[0].Content[0].Text, "word word") {
		t.Fatalf("reader %d's final response: %.300s", i, last)
	}
	if got := ev.Response.Output[0].Content[0].Text; got != deltas {
		t.Fatalf("reader %d: the final text (%d bytes) is not the new attempt's deltas (%d bytes)", i, len(got), len(deltas))
	}
}
