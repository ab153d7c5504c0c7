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
	s := openFresh(t)
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

// The partial indexes of migration 10 serve a query only when its WHERE
// repeats their condition word for word: a lookup by session or thread
// that does not would scan every run, and still answer correctly, so only
// its plan shows it. Each query must search (never scan) runs, through the
// index it is written for, and page a session's runs without sorting
// them.
func TestPartialIndexesMatchTheQueries(t *testing.T) {
	s := openFresh(t)
	for index, cond := range map[string]string{"runs_session": sessionNotOwnSQL, "runs_thread": threadNotOwnSQL} {
		var def string
		if err := s.r.QueryRow(`SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`, index).Scan(&def); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(def, "WHERE "+cond) {
			t.Errorf("%s is %q: its condition is not %q, which the queries repeat", index, def, cond)
		}
	}
	paged, _ := listQuery([]string{"tenant_id = ?", "status = ?", "seq < (SELECT seq FROM runs WHERE id = ? AND tenant_id = ?)"}, nil, "sess_x")
	whole, _ := listQuery(nil, nil, "sess_x")
	for _, c := range []struct {
		name, query string
		uses        []string
	}{
		{"new session", insertRunCheckedSQL(insertRunNewSessionSQL), []string{"runs_session", "runs_thread"}},
		{"in session", insertRunCheckedSQL(insertRunInSessionSQL), []string{"runs_session", "runs_thread"}},
		{"thread's session", threadSessionSQL, []string{"runs_thread"}},
		{"session's runs", whole, []string{"runs_session"}},
		{"session's runs, filtered and paged", paged, []string{"runs_session"}},
	} {
		rows, err := s.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+c.query, make([]any, strings.Count(c.query, "?"))...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		text := strings.Join(plan, "\n")
		if strings.Contains(text, "SCAN") || strings.Contains(text, "TEMP B-TREE") {
			t.Errorf("%s: scans or sorts:\n%s", c.name, text)
		}
		for _, index := range c.uses {
			if !strings.Contains(text, "USING INDEX "+index+" ") {
				t.Errorf("%s: does not use %s:\n%s", c.name, index, text)
			}
		}
	}
}

// openFresh opens a Store on a new file, closed when the test ends.
func openFresh(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
