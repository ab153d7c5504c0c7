package sqlite

import (
	"path/filepath"
	"strings"
	"testing"
)

// A run that opens a session or thread is inserted by a one-row VALUES
// statement: an INSERT … SELECT that reads runs made SQLite fill a
// temporary B-tree (OpenEphemeral) first, and keep a statement journal
// for a statement that might abort halfway (OR IGNORE never does).
func TestCheckedInsertHasNoTemporaryTable(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for name, check := range map[string]string{"new session": insertRunNewSessionSQL, "in session": insertRunInSessionSQL} {
		q := insertRunCheckedSQL(check)
		rows, err := s.r.QueryContext(t.Context(), "EXPLAIN "+q, make([]any, strings.Count(q, "?"))...)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			for i := range vals {
				vals[i] = new(any)
			}
			if err := rows.Scan(vals...); err != nil {
				t.Fatal(err)
			}
			if op, _ := (*vals[1].(*any)).(string); op == "OpenEphemeral" {
				t.Errorf("%s: the insert fills a temporary B-tree (%s)", name, op)
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
