//go:build linux

package sqlite

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/storetest"
)

// writeCalls is the process's count of write system calls so far
// (/proc/self/io's syscw: write, pwrite64 and the like). Every Linux
// kernel a host runs on keeps it (task I/O accounting), so its absence
// fails the test rather than passing it unchecked.
func writeCalls(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/io")
	if err != nil {
		t.Fatal("the write calls cannot be counted:", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "syscw: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no syscw in /proc/self/io")
	return 0
}

// A run's two commits, one caller at a time, write the WAL with one
// system call each: SQLite writes every frame as two (its header, its
// page), and a run's start is three frames and its end two, so the unix
// VFS made about ten writes per run where the gathering one makes two.
func TestCommitWritesTheWALOnce(t *testing.T) {
	s, run := smallRuns(t)
	for range 20 { // the file's first pages and the WAL's header
		run()
	}
	const runs = 200
	w0, g0 := writeCalls(t), walWrites.Load()
	for range runs {
		run()
	}
	w, g := writeCalls(t)-w0, walWrites.Load()-g0
	t.Logf("%d runs: %d write system calls (%.2f a run), %d of the WAL through the VFS", runs, w, float64(w)/runs, g)
	if w > 3*runs {
		t.Errorf("%d write system calls for %d runs (%.2f a run), want at most 3 a run: the commits' frames are not gathered", w, runs, float64(w)/runs)
	}
	// What was written reads back, on the readers (the unix VFS).
	got, _, err := s.ListRuns(t.Context(), runner.ListQuery{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[0].Status != runner.StatusCompleted {
		t.Fatalf("listed %d runs, the first %+v", len(got), got)
	}
}

// countLocks counts the process's fcntl lock calls (F_SETLK) from here to
// the test's end, through the unix VFS's system-call table, which every
// SQLite connection of the process shares.
func countLocks(t *testing.T) *atomic.Int64 {
	t.Helper()
	tls := libc.NewTLS()
	defer tls.Close()
	name, err := libc.CString("fcntl")
	if err != nil {
		t.Fatal(err)
	}
	defer libc.Xfree(tls, name)
	v := (*sqlite3.Tsqlite3_vfs)(at(unixVFS))
	get := v.FxGetSystemCall
	set := v.FxSetSystemCall
	orig := (*(*func(*libc.TLS, uintptr, uintptr) uintptr)(unsafe.Pointer(&get)))(tls, unixVFS, name)
	if orig == 0 {
		t.Fatal("the unix VFS has no fcntl to count")
	}
	fcntlOrig.Store(int64(orig))
	fcntlLocks.Store(0)
	if rc := (*(*func(*libc.TLS, uintptr, uintptr, uintptr) int32)(unsafe.Pointer(&set)))(tls, unixVFS, name, fnptr(countingFcntl)); rc != sqlite3.SQLITE_OK {
		t.Fatal("cannot count fcntl:", rc)
	}
	t.Cleanup(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		name, _ := libc.CString("fcntl")
		defer libc.Xfree(tls, name)
		(*(*func(*libc.TLS, uintptr, uintptr, uintptr) int32)(unsafe.Pointer(&set)))(tls, unixVFS, name, orig)
	})
	return &fcntlLocks
}

var fcntlOrig, fcntlLocks atomic.Int64

func countingFcntl(tls *libc.TLS, fd, cmd int32, va uintptr) int32 {
	if cmd == syscall.F_SETLK {
		fcntlLocks.Add(1)
	}
	fp := uintptr(fcntlOrig.Load())
	return (*(*func(*libc.TLS, int32, int32, uintptr) int32)(unsafe.Pointer(&fp)))(tls, fd, cmd, va)
}

// The writer's transactions take about two WAL-index locks, not six:
// SQLite moved a read mark to the log's end at every begin (the mark's
// lock taken exclusive and released), where the writer now reads from the
// highest mark within markLag frames, and released its read lock at every
// end, where the writer keeps it for its next begin. Left: the writer's
// own lock, taken and released. A run is two transactions.
func TestWriterKeepsItsReadMark(t *testing.T) {
	s, run := smallRuns(t)
	for range 20 {
		run()
	}
	locks := countLocks(t)
	const runs = 200
	skips := markSkips.Load()
	for range runs {
		run()
	}
	n, skipped := locks.Load(), markSkips.Load()-skips
	t.Logf("%d runs: %d fcntl locks (%.2f a run), %d mark moves answered busy", runs, n, float64(n)/runs, skipped)
	if n > 5*runs {
		t.Errorf("%d fcntl locks for %d runs (%.2f a run), want at most 5 a run: the writer moves a read mark at every begin, or lets its read lock go at every end", n, runs, float64(n)/runs)
	}
	// What was written reads back on the readers.
	got, _, err := s.ListRuns(t.Context(), runner.ListQuery{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[0].Status != runner.StatusCompleted {
		t.Fatalf("listed %d runs, the first %+v", len(got), got)
	}
}

// The writer keeps its last transaction's read lock for the next one
// (walShmLock), which a truncating checkpoint would wait on: Close lets
// it go first, so the last checkpoint empties the WAL at once.
func TestCloseTruncatesTheWALPastTheKeptReadLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	s, err := OpenWith(t.Context(), path, Options{CheckpointEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	reuses := parkReuses.Load()
	for range 20 {
		r := storetest.BenchOwnRun()
		if err := s.StartRun(t.Context(), r, false, false); err != nil {
			t.Fatal(err)
		}
	}
	if parkReuses.Load() == reuses {
		t.Error("no begin took the read lock its writer kept")
	}
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	// The last connection's close deletes an emptied WAL.
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() != 0 {
		t.Errorf("the WAL holds %d bytes after Close, want none", fi.Size())
	} else if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// Another process reads the file while the host writes and while it
// idles with its read lock kept (walShmLock): `runedge runs`, the sqlite3
// shell and a backup open it through the unix VFS, as the child here
// does (this test binary again, with RUNEDGE_TEST_READ_DB set).
func TestAnotherProcessReadsBesideTheWriter(t *testing.T) {
	if path := os.Getenv("RUNEDGE_TEST_READ_DB"); path != "" {
		db, err := openDB(path, url.Values{"_pragma": {"busy_timeout(10000)", "query_only(1)"}})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM runs").Scan(&n); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("runs=%d\n", n)
		return
	}
	path := filepath.Join(t.TempDir(), "runs.db")
	s, err := OpenWith(t.Context(), path, Options{CheckpointEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	start := func() {
		if err := s.StartRun(context.Background(), storetest.BenchOwnRun(), false, false); err != nil {
			t.Error(err)
		}
	}
	read := func() int {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run", "^TestAnotherProcessReadsBesideTheWriter$")
		cmd.Env = append(os.Environ(), "RUNEDGE_TEST_READ_DB="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the reading process: %v\n%s", err, out)
		}
		for line := range strings.Lines(string(out)) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "runs="); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
		t.Fatalf("the reading process printed no count:\n%s", out)
		return 0
	}
	for range 50 {
		start()
	}
	reuses := parkReuses.Load()
	start()
	if parkReuses.Load() == reuses {
		t.Fatal("the writer kept no read lock")
	}
	if n := read(); n != 51 {
		t.Errorf("the other process read %d runs while the host idled, want 51", n)
	}
	// And while it writes.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				start()
			}
		}
	}()
	n := read()
	close(stop)
	<-done
	if n < 51 {
		t.Errorf("the other process read %d runs while the host wrote, want at least 51", n)
	}
}

// The checkpointer's tick lets the writer's kept read lock go while no
// transaction is open, so an idle host's WAL is copied whole and another
// connection's TRUNCATE checkpoint (busy_timeout 0, as the sqlite3 shell
// by default) is not refused for it.
func TestIdleWriterLetsItsReadLockGo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	s, err := OpenWith(t.Context(), path, Options{CheckpointEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	other, err := openDB(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.SetMaxOpenConns(1)
	reuses := parkReuses.Load()
	for range 20 {
		if err := s.StartRun(t.Context(), storetest.BenchOwnRun(), false, false); err != nil {
			t.Fatal(err)
		}
	}
	if parkReuses.Load() == reuses {
		t.Fatal("the writer kept no read lock")
	}
	time.Sleep(100 * time.Millisecond) // a few ticks with nothing written
	var busy, log, done int
	if err := other.QueryRowContext(t.Context(), "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &done); err != nil {
		t.Fatal(err)
	}
	if busy != 0 {
		t.Errorf("another connection's TRUNCATE checkpoint of an idle host was busy (log %d, copied %d)", log, done)
	}
}

// smallRuns opens a store on a new file whose checkpointer waits an hour
// and returns it with a function that writes one small run as make run's chat
// request does: its start, then its end with usage and its ledger line.
func smallRuns(t *testing.T) (_ *Store, run func()) {
	t.Helper()
	s, err := OpenWith(t.Context(), filepath.Join(t.TempDir(), "runs.db"), Options{CheckpointEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, func() {
		r := storetest.BenchOwnRun()
		if err := s.StartRun(t.Context(), r, false, false); err != nil {
			t.Fatal(err)
		}
		ended := r.CreatedAt + 1
		if err := s.Transition(t.Context(), r.ID, runner.Transition{
			Status: runner.StatusCompleted, EndedAt: &ended, Output: "You said: hello",
			Usage: &runner.Usage{InputTokens: 1, OutputTokens: 3, TotalTokens: 4}, Lease: r.LeaseToken,
			Ledger: &runner.UsageEntry{RunID: r.ID, TenantID: r.TenantID, ActorID: r.Actor.ID, Token: "app", Model: "offline", At: ended, InputTokens: 1, OutputTokens: 3},
		}); err != nil {
			t.Fatal(err)
		}
	}
}
