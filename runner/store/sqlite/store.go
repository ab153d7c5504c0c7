// Package sqlite is the default runner.Store: one SQLite file, pure Go
// (modernc.org/sqlite). Writes go through one group-commit writer (many
// runs' writes per transaction), reads through a pool of read-only
// connections; in WAL mode readers never wait for the writer.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/internal/groupcommit"
	"github.com/runedge/runedge/runner/store/internal/itemref"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Options tune a Store; the zero value is the defaults.
type Options struct {
	// CommitWindow is how long the writer waits for more writes to join a
	// batch (0: only those already queued; see DefaultCommitWindow).
	CommitWindow time.Duration
	// CommitBatch is the largest batch (default 128).
	CommitBatch int
	// CheckpointEvery is how often the background checkpointer copies the
	// WAL into the database file (default 1s).
	CheckpointEvery time.Duration
	// MarkEvery is how often, at most, a host's low-water mark for
	// start-up recovery is raised (default DefaultMarkEvery, marks.go).
	MarkEvery time.Duration
}

// DefaultCommitWindow is the group-commit window when none is configured:
// none. A batch is what queued while the previous commit ran, which under
// concurrency is plenty; waiting on a timer on top cost a run 2.8 ms
// instead of 0.37 ms on a loaded machine (a sleeping writer is woken late),
// see RATIONALE.md.
const DefaultCommitWindow = 0

// Store implements runner.Store on a SQLite file.
type Store struct {
	w      *sql.DB // the writer pool: one connection, held by wt
	r      *sql.DB // read-only pool
	st     *stmts  // the request path's statements, prepared on w and r
	wt     *wtx    // the writer connection's transactions (wtx.go)
	writer *groupcommit.Writer[*wtx]
	ckpt   *checkpointer
	marks  *liveMarks // start-up recovery's low-water marks (marks.go)
	// pending keeps the hash of each running response's input for its
	// last write (itemref).
	pending itemref.Pending
	// requests keeps the hash state of recent recorded requests' inputs,
	// so a resent history is not hashed again (itemref.RequestCache).
	requests itemref.RequestCache
	// apart is the size over which a run's recorded request is a row of
	// run_requests, not in the run's row (StartRun, migration 14).
	apart int
}

// busyTimeoutMS is the writer's busy_timeout: how long a write waits for
// a lock another process (another host on the file) holds before it
// fails SQLITE_BUSY, an outage (outage.go).
const busyTimeoutMS = 10000

// writerCacheKiB bounds the writer connection's page cache (SQLite's
// default is 2,000 KiB per connection). The writer's cache fills with the
// pages its commits wrote, most of which no later statement reads (an
// agent-sized request's rows are some 60 pages each), and it is memory
// outside the Go heap that stays resident for the connection's life:
// 256 KiB took 2–3 MiB off a host's peak RSS under agent-sized bodies
// (RATIONALE.md, "Peak RSS: what a host holds"). The readers keep the
// default: a smaller one there did not lower the peak. The writer's
// cache_spill is off: a transaction larger than the bound (a 1 MB stored
// input's 34,000 items) keeps its dirty pages until it commits, where
// spilling them to the WAL mid-transaction made it 30–40% slower, and
// pages over the bound are freed as they are released after the commit.
const writerCacheKiB = 256

// requestApart is Store.apart: about a page. Up to it, rewriting the
// request with the run's row at its end costs less than the page of
// another B-tree a row of its own would write with every run (15% more
// CPU per small run in BenchmarkCreateAndFinishRun16).
const requestApart = 4 << 10

var (
	_ runner.Store            = (*Store)(nil)
	_ runner.CommitObservable = (*Store)(nil)
)

// Open opens (creating if needed, with its parent directory) the database at
// path with the default options and brings its schema up to date.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenWith(ctx, path, Options{CommitWindow: DefaultCommitWindow})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, o Options) (*Store, error) {
	// Writer and readers are separate connections to the same file, so the
	// path must name a file: not a URI, and not ":memory:" (each connection
	// would get its own empty database).
	if path == "" || path == ":memory:" || strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("runner/store/sqlite: %q is not a plain file path", path)
	}
	if err := createPrivate(path); err != nil {
		return nil, err
	}
	wq := url.Values{
		// wal_autocheckpoint(0): the checkpointer goroutine does it, so no
		// request's commit carries a checkpoint and its fsyncs.
		// cache_size and cache_spill: writerCacheKiB.
		"_pragma": {"busy_timeout(" + strconv.Itoa(busyTimeoutMS) + ")", "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(1)", "wal_autocheckpoint(0)",
			"cache_size(-" + strconv.Itoa(writerCacheKiB) + ")", "cache_spill(0)"},
		// Write transactions take the lock at BEGIN, so two of them can
		// never deadlock upgrading from a read lock.
		"_txlock": {"immediate"},
	}
	// The writer appends a commit's WAL frames in one write (walvfs.go).
	if v := walVFS(); v != "" {
		wq.Set("vfs", v)
	}
	w, err := openDB(path, wq)
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := migrate(ctx, w); err != nil {
		w.Close()
		return nil, err
	}
	// Readers open after the migration so they find the file in WAL mode
	// with its tables in place.
	r, err := openDB(path, url.Values{
		"_pragma": {"busy_timeout(10000)", "foreign_keys(1)", "query_only(1)"},
	})
	if err != nil {
		w.Close()
		return nil, err
	}
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	marks := newLiveMarks(o.MarkEvery)
	if err := marks.load(ctx, r); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("runner/store/sqlite: %w", err)
	}
	// The writer pool's one connection, held from here to Close: its
	// hot statements run on its SQLite handle (rawexec.go), which must
	// stay the connection they were prepared on. Nothing else takes it
	// from w.
	wc, err := w.Conn(ctx)
	if err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("runner/store/sqlite: %w", err)
	}
	st, err := prepareStmts(ctx, wc, r)
	if err != nil {
		wc.Close()
		r.Close()
		w.Close()
		return nil, err
	}
	wt := &wtx{c: wc, mu: new(sync.Mutex), st: st}
	ckpt, err := startCheckpointer(path, o.CheckpointEvery, func() { wt.releaseReadLock(false) }, func() { wt.tail.Store(true) })
	if err != nil {
		st.close()
		wc.Close()
		r.Close()
		w.Close()
		return nil, err
	}
	s := &Store{w: w, r: r, st: st, ckpt: ckpt, marks: marks, wt: wt, apart: requestApart}
	s.writer = groupcommit.New[*wtx](txDriver{s.wt}, groupcommit.Config{
		Window: o.CommitWindow, MaxBatch: o.CommitBatch,
		// busy_timeout (10 s, as the writer's default Timeout) bounds the
		// wait for a lock another process holds and ends in SQLITE_BUSY,
		// an outage; a context that can end would cost a goroutine per
		// statement in the driver.
		NoDeadline: true,
	})
	return s, nil
}

// createPrivate creates path's directory (0700) and the file itself (0600)
// when missing, and narrows an existing file to 0600: runs hold every
// request's input and output. SQLite creates the -wal and -shm files with
// the database file's mode.
func createPrivate(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("runner/store/sqlite: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("runner/store/sqlite: %w", err)
	}
	defer f.Close()
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("runner/store/sqlite: %w", err)
	}
	return nil
}

func openDB(path string, q url.Values) (*sql.DB, error) {
	db, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("runner/store/sqlite: open %s: %w", path, err)
	}
	return db, nil
}

// Close commits queued writes, stops the checkpointer (after a last
// checkpoint) and closes the statements and both connection pools.
func (s *Store) Close() error {
	s.writer.Close()
	// The writer's kept read lock (walvfs.go) goes before the last
	// checkpoint needs every read mark.
	s.wt.releaseReadLock(true)
	cerr := s.ckpt.stop()
	return errors.Join(cerr, s.st.close(), s.wt.c.Close(), s.r.Close(), s.w.Close())
}

// SetCommitObserver reports each group commit (its duration and how many
// run writes it carried) to o (runner.CommitObservable).
func (s *Store) SetCommitObserver(o runner.CommitObserver) { s.writer.SetObserver(o.ObserveCommit) }

// CommitStats reports how many batches and writes the group-commit writer
// has committed.
func (s *Store) CommitStats() (batches, writes int64) { return s.writer.Stats() }

// notFound wraps runner.ErrNotFound with what was looked up.
func notFound(what, id string) error {
	return fmt.Errorf("%w: %s %s", runner.ErrNotFound, what, id)
}
