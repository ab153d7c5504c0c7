package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/runedge/runedge/runner"
)

// scratchStore is a Store with a table of one column per value kind the
// writer's statements bind, written once through the C interface
// (rawStmt) and once through modernc's driver (database/sql).
func scratchStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.wt.c.ExecContext(t.Context(), `CREATE TABLE scratch (via TEXT, k INTEGER, v ANY, UNIQUE (via, k))`); err != nil {
		t.Fatal(err)
	}
	return s
}

// rawInsert runs query as a raw statement in a transaction of its own.
func rawInsert(t *testing.T, s *Store, query string, args ...any) (rawResult, error) {
	t.Helper()
	st, err := s.st.cc.prepare(query)
	if err != nil {
		t.Fatal(err)
	}
	var res rawResult
	err = s.ownTx(t.Context(), func(ctx context.Context, tx *wtx) error {
		res, err = tx.exec(ctx, st, args...)
		return err
	})
	return res, err
}

// TestWriterStatementsOnTheCInterface: every kind of value the writer's
// statements pass is stored as modernc's driver stores it, value and
// type: the raw statements took over the driver's binding.
func TestWriterStatementsOnTheCInterface(t *testing.T) {
	s := scratchStore(t)
	values := []any{nil, "", "text é", int64(-7), 42, true, false, 1.5, []byte(nil), []byte{}, []byte("blob\x00x"),
		runner.StatusCompleted, strings.Repeat("long ", cbufMax/4)} // the last: more than the kept buffer
	for k, v := range values {
		res, err := rawInsert(t, s, `INSERT INTO scratch VALUES ('raw', ?, ?)`, k, v)
		if err != nil {
			t.Fatalf("value %d (%T): %v", k, v, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("value %d: %d rows changed", k, n)
		}
		if id, _ := res.LastInsertId(); id == 0 {
			t.Fatalf("value %d: no rowid", k)
		}
		if _, err := s.wt.c.ExecContext(t.Context(), `INSERT INTO scratch VALUES ('driver', ?, ?)`, k, v); err != nil {
			t.Fatal(err)
		}
	}
	for k := range values {
		var got [2]struct {
			typ string
			v   any
		}
		for i, via := range []string{"raw", "driver"} {
			if err := s.r.QueryRowContext(t.Context(), `SELECT typeof(v), v FROM scratch WHERE via = ? AND k = ?`, via, k).Scan(&got[i].typ, &got[i].v); err != nil {
				t.Fatal(err)
			}
		}
		if !reflect.DeepEqual(got[0], got[1]) {
			t.Errorf("value %d (%T): raw %s %.40q, driver %s %.40q", k, values[k], got[0].typ, got[0].v, got[1].typ, got[1].v)
		}
	}
}

// TestWriterStatementErrors: SQLite's refusal of a raw statement is an
// error with its extended code and message, not an outage; the statement
// is usable again after it; a wrong number of arguments is refused
// before SQLite sees it.
func TestWriterStatementErrors(t *testing.T) {
	s := scratchStore(t)
	if _, err := rawInsert(t, s, `INSERT INTO scratch VALUES ('raw', ?, ?)`, 1, "a"); err != nil {
		t.Fatal(err)
	}
	_, err := rawInsert(t, s, `INSERT INTO scratch VALUES ('raw', ?, ?)`, 1, "b")
	var ee *execError
	if !errors.As(err, &ee) || ee.Code() != sqlite3.SQLITE_CONSTRAINT_UNIQUE || !strings.Contains(err.Error(), "UNIQUE") {
		t.Fatalf("a duplicate key: %v", err)
	}
	if outage(&err); errors.Is(err, runner.ErrUnavailable) {
		t.Fatalf("a constraint is an outage: %v", err)
	}
	busy := error(&execError{code: sqlite3.SQLITE_BUSY_SNAPSHOT, msg: "busy"})
	if outage(&busy); !errors.Is(busy, runner.ErrUnavailable) {
		t.Fatalf("SQLITE_BUSY is no outage: %v", busy)
	}
	if _, err := rawInsert(t, s, `INSERT INTO scratch VALUES ('raw', ?, ?)`, 2); err == nil {
		t.Fatal("one argument for two parameters was run")
	}
	if _, err := rawInsert(t, s, `INSERT INTO scratch VALUES ('raw', ?, ?)`, 3, struct{}{}); err == nil {
		t.Fatal("a struct was bound")
	}
	var n int
	if err := s.r.QueryRowContext(t.Context(), `SELECT count(*) FROM scratch`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d rows (%v), want the first one only", n, err)
	}
}

// TestWriterStatementAllocatesNothing: a raw statement's values are
// bound from the connection's buffer, with no allocation of the Go heap
// (modernc's driver allocated a result and a C copy per text value).
func TestWriterStatementAllocatesNothing(t *testing.T) {
	s := scratchStore(t)
	st, err := s.st.cc.prepare(`INSERT OR REPLACE INTO scratch VALUES ('raw', ?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s.wt.mu.Lock()
	defer s.wt.mu.Unlock()
	k, v := any(int64(1)), any("a text value")
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := s.wt.exec(ctx, st, k, v); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations a statement", allocs)
	}
}
