package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/postgres"
	"github.com/runedge/runedge/runner/store/postgres/pgtest"
)

// A purge, or a delete of a response, and a turn whose write references
// the run being emptied (its request kept by reference to that run's,
// its response based on that run's response) lock the run's two rows in
// the same order, the run's then the response's: one waits for the
// other, never each for the other (a deadlock, SQLSTATE 40P01, which
// PostgreSQL breaks after deadlock_timeout by failing one of them). The
// purge or delete is held once it took its first locks until the turn's
// write waits behind it, then let go; it must then never wait for the
// turn's write, and both must succeed, the turn's request and input
// reading back whole.
func TestEmptyingBesideATurnOnItsRunTakesLocksInOneOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		empty func(ctx context.Context, s *postgres.Store, base runner.Run) error
	}{
		{"Purge", func(ctx context.Context, s *postgres.Store, _ runner.Run) error {
			_, err := s.PurgeBefore(ctx, 200)
			return err
		}},
		{"DeleteResponse", func(ctx context.Context, s *postgres.Store, base runner.Run) error {
			return s.DeleteResponse(ctx, "t1", base.ID)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { testEmptyingBesideATurn(t, tc.empty) })
	}
}

func testEmptyingBesideATurn(t *testing.T, empty func(ctx context.Context, s *postgres.Store, base runner.Run) error) {
	dsn := pgtest.Schema(t)
	s, err := postgres.Open(t.Context(), dsn, postgres.Options{CommitWindow: postgres.DefaultCommitWindow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	watch, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { watch.Close(context.Background()) })

	var history []runner.Message
	for i := range 30 {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		history = append(history, runner.Message{Role: role, Content: fmt.Sprintf("turn %d: %s", i, strings.Repeat("set the content type; ", 25))})
	}
	end := int64(100)
	base, err := purgeTurn(t.Context(), s, history, &end)
	if err != nil {
		t.Fatal(err)
	}
	history = append(history, base.out, runner.Message{Role: "user", Content: "and now? " + strings.Repeat("set the header; ", 25)})

	var once sync.Once
	held, release := make(chan uint32, 1), make(chan struct{})
	postgres.SetAfterEmptyLocks(s, func(pid uint32) {
		once.Do(func() {
			held <- pid
			<-release
		})
	})
	purged := make(chan error, 1)
	go func() {
		purged <- empty(context.WithoutCancel(t.Context()), s, base.run)
	}()
	var purgePID uint32
	select {
	case purgePID = <-held:
	case err := <-purged:
		t.Fatalf("the purge or delete returned (%v) before it was held", err)
	}
	type result struct {
		turn purgedTurn
		err  error
	}
	turned := make(chan result, 1)
	go func() {
		tr, err := purgeTurn(context.WithoutCancel(t.Context()), s, history, nil)
		turned <- result{tr, err}
	}()
	// The turn's write waits for a lock the purge or delete holds.
	blocked := func(waiter, holder uint32) bool {
		var n int
		if err := watch.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND $2 = ANY(pg_blocking_pids(pid))`,
			int32(waiter), int32(holder)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	var turnPID uint32
	for deadline := time.Now().Add(30 * time.Second); turnPID == 0; time.Sleep(5 * time.Millisecond) {
		var pid int32
		err := watch.QueryRow(t.Context(), `SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, int32(purgePID)).Scan(&pid)
		switch {
		case err == nil:
			turnPID = uint32(pid)
		case err != pgx.ErrNoRows:
			t.Fatal(err)
		case time.Now().After(deadline):
			close(release)
			t.Fatal("the turn's write never waited for the purge or delete")
		}
	}
	close(release)
	var perr error
	var tr result
	for got := 0; got < 2; {
		select {
		case perr = <-purged:
			got++
			purged = nil
		case tr = <-turned:
			got++
			turned = nil
		case <-time.After(5 * time.Millisecond):
			if purged != nil && blocked(purgePID, turnPID) && blocked(turnPID, purgePID) {
				t.Errorf("the purge or delete and the turn's write wait for each other (a deadlock)")
				purgePID = 0 // said once
			}
		}
	}
	if perr != nil {
		t.Errorf("purge or delete: %v", perr)
	}
	if tr.err != nil {
		t.Fatalf("turn: %v", tr.err)
	}
	got, err := s.GetRun(t.Context(), "t1", tr.turn.run.ID)
	if err != nil || !bytes.Equal(got.Request, tr.turn.run.Request) {
		t.Fatalf("the turn's request reads back %d bytes (%v), want %d", len(got.Request), err, len(tr.turn.run.Request))
	}
	items, err := s.ResponseItems(t.Context(), tr.turn.run.ID)
	if err != nil || len(items) != len(history) {
		t.Fatalf("the turn's response has %d items (%v), want %d", len(items), err, len(history))
	}
	for i, it := range items {
		if it.Message.Content != history[i].Content {
			t.Fatalf("item %d of the turn reads %q, want %q", i, it.Message.Content, history[i].Content)
		}
	}
}

// purgedTurn is a turn as purgeTurn started it.
type purgedTurn struct {
	run runner.Run // as given, Request whole
	out runner.Message
}

// purgeTurn runs a turn of tenant t1 that sends history, as a client
// that resends its history does: the run's recorded request (kept by
// reference to an earlier run's when it begins alike) joined with its
// stored response's first write (based on an earlier response when its
// input begins alike). With ended, the response gets its answer and the
// run ends at that time.
func purgeTurn(ctx context.Context, s *postgres.Store, history []runner.Message, ended *int64) (purgedTurn, error) {
	req := []byte(`{"model":"service","input":[`)
	var bounds []int
	for i, m := range history {
		if i > 0 {
			req = append(req, ',')
		}
		b, err := json.Marshal(m)
		if err != nil {
			return purgedTurn{}, err
		}
		req = append(req, b...)
		bounds = append(bounds, len(req))
	}
	r := &runner.Run{ID: runner.NewID(contract.RunPrefix), Status: runner.StatusRunning, TenantID: "t1",
		Endpoint: contract.EndpointResponses, CreatedAt: 1, Request: append(req, `]}`...), RequestBounds: bounds}
	r.SessionID, r.ThreadID = contract.OwnSessionID(r.ID), contract.OwnThreadID(r.ID)
	tr := purgedTurn{run: *r}
	input := make([]runner.Item, len(history))
	for i, m := range history {
		input[i] = runner.Item{ID: runner.InputItemID(r.ID, i, m.Role), RunID: r.ID, Message: m}
	}
	rec := runner.ResponseRecord{RunID: r.ID, TenantID: "t1"}
	rctx, begun := s.JoinBegin(ctx, rec, input)
	if err := s.StartRun(rctx, r, false, false); err != nil {
		return tr, fmt.Errorf("start: %w", err)
	}
	if !begun() { // as the runner does (a refused write is retried without it)
		if err := s.BeginResponse(ctx, rec, input); err != nil {
			return tr, fmt.Errorf("begin response: %w", err)
		}
	}
	if ended == nil {
		return tr, nil
	}
	tr.out = runner.Message{Role: "assistant", Content: "done: " + strings.Repeat("the header is set; ", 25)}
	output := []runner.Item{{ID: contract.MessageID(r.ID), RunID: r.ID, Output: true, Message: tr.out}}
	if err := s.EndResponse(ctx, r.ID, []byte(`{"id":"`+contract.ResponseID(r.ID)+`"}`), output); err != nil {
		return tr, fmt.Errorf("end response: %w", err)
	}
	if err := s.Transition(ctx, r.ID, runner.Transition{Status: runner.StatusCompleted, EndedAt: ended}); err != nil {
		return tr, fmt.Errorf("end: %w", err)
	}
	return tr, nil
}
