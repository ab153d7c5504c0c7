// Package sqlite is the default run store: one SQLite file, pure Go
// (modernc.org/sqlite, no cgo), so a single runedge binary keeps its own
// history without a database server.
//
// SQLite allows one writer at a time, so the store keeps exactly one write
// connection (writes queue in database/sql instead of failing with
// SQLITE_BUSY) and a pool of read-only connections; in WAL mode readers never
// wait for the writer.
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
	"strings"

	"github.com/runedge/runedge/runner"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Store implements runner.Store on a SQLite file.
type Store struct {
	w  *sql.DB // the single writer
	r  *sql.DB // read-only pool
	st *stmts  // the request path's statements, prepared on w and r
}

var _ runner.Store = (*Store)(nil)

// Open opens (creating if needed, with its parent directory) the database at
// path and brings its schema up to date.
func Open(ctx context.Context, path string) (*Store, error) {
	// Writer and readers are separate connections to the same file, so the
	// path must name a file: not a URI, and not ":memory:" (each connection
	// would get its own empty database).
	if path == "" || path == ":memory:" || strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("runner/store/sqlite: %q is not a plain file path", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("runner/store/sqlite: %w", err)
	}
	w, err := openDB(path, url.Values{
		"_pragma": {"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(1)"},
		// Write transactions take the lock at BEGIN, so two of them can
		// never deadlock upgrading from a read lock.
		"_txlock": {"immediate"},
	})
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
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
	st, err := prepareStmts(ctx, w, r)
	if err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	return &Store{w: w, r: r, st: st}, nil
}

func openDB(path string, q url.Values) (*sql.DB, error) {
	db, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("runner/store/sqlite: open %s: %w", path, err)
	}
	return db, nil
}

// Close closes the prepared statements and both connection pools.
func (s *Store) Close() error {
	return errors.Join(s.st.close(), s.r.Close(), s.w.Close())
}

// notFound wraps runner.ErrNotFound with what was looked up.
func notFound(what, id string) error {
	return fmt.Errorf("%w: %s %s", runner.ErrNotFound, what, id)
}
