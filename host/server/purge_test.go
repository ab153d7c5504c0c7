package server

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/sqlite"
)

// slowPurge is a real SQLite store whose purge is still writing for a
// moment after it is told to stop, as a purge of many rows is.
type slowPurge struct {
	runner.Store
	started chan struct{}
	after   atomic.Pointer[error] // the purge's write after the stop
	once    atomic.Bool
}

func (s *slowPurge) PurgeBefore(ctx context.Context, before int64) (int64, error) {
	if !s.once.CompareAndSwap(false, true) {
		return 0, nil
	}
	close(s.started)
	<-ctx.Done()
	time.Sleep(100 * time.Millisecond)
	n, err := s.Store.PurgeBefore(context.WithoutCancel(ctx), before)
	s.after.Store(&err)
	return n, err
}

// TestPurgeJoinedBeforeStoreCloses: closing the server waits for the
// store.retention loop to return before it closes the store, so a purge in
// flight never writes to a closed store.
func TestPurgeJoinedBeforeStoreCloses(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	sp := &slowPurge{Store: st, started: make(chan struct{})}
	s := &Server{store: sp, log: slog.New(slog.DiscardHandler)}
	s.stopPurge = startPurge(context.Background(), sp, time.Minute, s.log)
	<-sp.started
	s.close(context.Background())
	p := sp.after.Load()
	if p == nil {
		t.Fatal("the purge was still running when the store closed")
	}
	if *p != nil {
		t.Fatalf("the purge wrote to a closed store: %v", *p)
	}
}
