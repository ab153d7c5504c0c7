package sqlite

import (
	"database/sql"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/storetest"
)

// connHandle is the sqlite3* of c: modernc's driver connection keeps it
// in its unexported field db.
func connHandle(t *testing.T, c *sql.Conn) uintptr {
	t.Helper()
	var h uintptr
	if err := c.Raw(func(dc any) error {
		f := reflect.ValueOf(dc).Elem().FieldByName("db")
		if !f.IsValid() {
			t.Fatalf("modernc's connection %T has no field db", dc)
		}
		h = uintptr(f.Uint())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestConnectionMutexIsTheMark: the writer's and a reader's connections
// run without a mutex of their own, while every other mutex SQLite
// allocates (a static one, a fast one as the unix VFS's per-file lock
// mutex is) is still a real one that excludes.
func TestConnectionMutexIsTheMark(t *testing.T) {
	if connMutexError != nil {
		t.Fatal(connMutexError)
	}
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reader, err := s.r.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	s.wt.mu.Lock()
	defer s.wt.mu.Unlock()
	for name, c := range map[string]*sql.Conn{"writer": s.wt.c, "reader": reader} {
		h := connHandle(t, c)
		if m := (*sqlite3.Tsqlite3)(at(h)).Fmutex; m != markAddr() {
			t.Errorf("the %s connection's mutex is %#x, not the mark %#x", name, m, markAddr())
		}
	}

	tls := libc.NewTLS()
	defer tls.Close()
	for _, typ := range []int32{sqlite3.SQLITE_MUTEX_FAST, sqlite3.SQLITE_MUTEX_STATIC_VFS1} {
		m := sqlite3.Xsqlite3_mutex_alloc(tls, typ)
		if m == 0 || m == markAddr() {
			t.Fatalf("mutex of type %d: %#x, not a real mutex", typ, m)
		}
		sqlite3.Xsqlite3_mutex_enter(tls, m)
		// A real mutex held by one thread cannot be taken by another.
		other := libc.NewTLS()
		got := sqlite3.Xsqlite3_mutex_try(other, m)
		other.Close()
		if got == sqlite3.SQLITE_OK {
			t.Errorf("mutex of type %d taken twice at once", typ)
		}
		sqlite3.Xsqlite3_mutex_leave(tls, m)
		if typ == sqlite3.SQLITE_MUTEX_FAST {
			sqlite3.Xsqlite3_mutex_free(tls, m)
		}
	}
}

// TestConnectionsWithoutMutexUnderLoad: runs written from many
// goroutines through the group commit while others read and list them,
// every connection without its mutex (under -race, the pool and the
// writer's lock are what keep a connection to one goroutine).
func TestConnectionsWithoutMutexUnderLoad(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const writers, perWriter = 8, 60
	var wg sync.WaitGroup
	ids := make(chan string, writers*perWriter)
	for range writers {
		wg.Go(func() {
			for range perWriter {
				r := storetest.BenchOwnRun()
				if err := s.StartRun(t.Context(), r, false, false); err != nil {
					t.Error(err)
					return
				}
				ended := r.CreatedAt + 1
				if err := s.Transition(t.Context(), r.ID, runner.Transition{
					Status: runner.StatusCompleted, EndedAt: &ended, Output: "You said: hello", Lease: r.LeaseToken,
					Ledger: &runner.UsageEntry{RunID: r.ID, TenantID: r.TenantID, ActorID: r.Actor.ID, Token: "app", Model: "offline", At: ended, InputTokens: 1, OutputTokens: 3},
				}); err != nil {
					t.Error(err)
					return
				}
				ids <- r.ID
			}
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 4 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, _, err := s.ListRuns(t.Context(), runner.ListQuery{TenantID: storetest.BenchRun("", "").TenantID, Limit: 20}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(ids)
	tenant := storetest.BenchRun("", "").TenantID
	n := 0
	for id := range ids {
		r, err := s.GetRun(t.Context(), tenant, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != runner.StatusCompleted {
			t.Fatalf("run %s is %s", id, r.Status)
		}
		n++
	}
	if n != writers*perWriter {
		t.Fatalf("%d runs written, want %d", n, writers*perWriter)
	}
}
