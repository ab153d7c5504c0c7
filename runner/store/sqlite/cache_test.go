package sqlite

import (
	"path/filepath"
	"testing"
)

// TestWriterCacheIsBounded: the writer connection, the one every commit
// runs on, caches at most writerCacheKiB of pages (SQLite's default,
// 2,000 KiB, kept an agent-sized host's written pages resident outside
// the Go heap: RATIONALE.md, "Peak RSS: what a host holds"), and the
// readers keep SQLite's default; a transaction larger than the bound does
// not spill its dirty pages (cache_spill off). SQLite counts no memory in this build
// (SQLITE_DEFAULT_MEMSTATUS=0), so the bound is read back from the
// connections themselves.
func TestWriterCacheIsBounded(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var w, r, spill int
	s.wt.mu.Lock()
	err = s.wt.c.QueryRowContext(t.Context(), "PRAGMA cache_size").Scan(&w)
	if err == nil {
		err = s.wt.c.QueryRowContext(t.Context(), "PRAGMA cache_spill").Scan(&spill)
	}
	s.wt.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.r.QueryRowContext(t.Context(), "PRAGMA cache_size").Scan(&r); err != nil {
		t.Fatal(err)
	}
	if w != -writerCacheKiB || writerCacheKiB > 256 {
		t.Errorf("the writer's cache_size = %d, want -%d (KiB, at most 256)", w, writerCacheKiB)
	}
	// A transaction larger than the cache keeps its dirty pages in memory
	// until it commits: spilled to the WAL mid-transaction, a 1 MB stored
	// input (34,000 items) took 9–10 s under -race against 7 s.
	if spill != 0 {
		t.Errorf("the writer's cache_spill = %d, want 0 (off)", spill)
	}
	if r != -2000 {
		t.Errorf("a reader's cache_size = %d, want SQLite's default -2000", r)
	}
}
