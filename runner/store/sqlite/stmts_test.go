package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
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

// A fresh run's inserts write freshRunValues as literals instead of
// binding them: the row must be the one the insert that binds every value
// writes, value and type (quote: an empty text is not NULL, 0 is not '0'), for each
// of the three inserts (a run in a known thread, one opening its session,
// one opening a thread in a session).
func TestFreshInsertWritesTheSameRow(t *testing.T) {
	s := openFresh(t)
	ctx := t.Context()
	cols := strings.Split(strings.Join(strings.Fields(insertRunCols), ""), ",")
	row := func(id string) []string {
		t.Helper()
		q := make([]string, len(cols))
		for i, c := range cols {
			q[i] = "quote(" + c + ")"
		}
		vals := make([]string, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := s.r.QueryRowContext(ctx, `SELECT `+strings.Join(q, ", ")+` FROM runs WHERE id = ?`, id).Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		return vals
	}
	// bound inserts r with every value bound (the insert a run that is not
	// fresh gets).
	bound := func(r *runner.Run, st *rawStmt, check []any) {
		t.Helper()
		args, err := runArgs(nil, r, "{}", false, check...)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.writer.Do(ctx, func(ctx context.Context, tx *wtx) error {
			_, err := tx.exec(ctx, st, args...)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	run := func(id string) *runner.Run {
		started := int64(1700000000)
		return &runner.Run{ID: id, Object: "run", Status: runner.StatusRunning, SessionID: contract.OwnSessionID(id),
			ThreadID: contract.OwnThreadID(id), Actor: runner.Actor{ID: "a", Type: "service", Name: "A"}, TenantID: "t",
			Endpoint: "chat.completions", Model: "service", CreatedAt: started, StartedAt: &started, HostID: "h",
			LeaseToken: 1, LeaseExpiresAt: started + 30, Request: []byte("{}")}
	}
	for _, c := range []struct {
		name                  string
		newSession, newThread bool
		full                  func(r *runner.Run) (*rawStmt, []any)
	}{
		{"known thread", false, false, func(*runner.Run) (*rawStmt, []any) { return s.st.insertRun, nil }},
		{"new session", true, true, func(r *runner.Run) (*rawStmt, []any) {
			return s.st.insertRunNewSession, []any{contract.OpenerID(r.SessionID), r.SessionID, r.SessionID,
				contract.OpenerID(r.ThreadID), r.ThreadID, r.ThreadID}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := run(runner.NewID(contract.RunPrefix)), run(runner.NewID(contract.RunPrefix))
			if !fresh(a) {
				t.Fatal("the run is not fresh")
			}
			if st, _ := s.insertOf(a, c.newSession, c.newThread); func() bool { full, _ := c.full(a); return st == full }() {
				t.Fatal("a fresh run gets the insert that binds every value")
			}
			if err := s.StartRun(ctx, a, c.newSession, c.newThread); err != nil {
				t.Fatal(err)
			}
			st, check := c.full(b)
			bound(b, st, check)
			got, want := row(a.ID), row(b.ID)
			for i, col := range cols {
				switch col {
				case "id", "session_id", "thread_id":
					continue
				}
				if got[i] != want[i] {
					t.Errorf("%s: fresh insert wrote %s, the bound one %s", col, got[i], want[i])
				}
			}
		})
	}
	// A run in a session it continues: opened by a, continued by b and c.
	a := run(runner.NewID(contract.RunPrefix))
	if err := s.StartRun(ctx, a, true, true); err != nil {
		t.Fatal(err)
	}
	b, c := run(runner.NewID(contract.RunPrefix)), run(runner.NewID(contract.RunPrefix))
	b.SessionID, c.SessionID = a.SessionID, a.SessionID
	if err := s.StartRun(ctx, b, false, true); err != nil {
		t.Fatal(err)
	}
	bound(c, s.st.insertRunInSession, []any{contract.OpenerID(c.SessionID), c.SessionID, c.TenantID, c.SessionID, c.TenantID,
		contract.OpenerID(c.ThreadID), c.ThreadID, c.ThreadID})
	got, want := row(b.ID), row(c.ID)
	for i, col := range cols {
		if col != "id" && col != "thread_id" && got[i] != want[i] {
			t.Errorf("in session: %s: fresh insert wrote %s, the bound one %s", col, got[i], want[i])
		}
	}
}
