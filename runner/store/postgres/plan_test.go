package postgres_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/postgres"
	"github.com/runedge/runedge/runner/store/postgres/pgtest"
	"github.com/runedge/runedge/runner/store/storetest"
)

// A run's end keeps the server's generic plan: after five executions the
// server plans a prepared statement once more only when its generic plan
// looks dearer than the custom ones, and the end with the output
// reference as a parameter always did (the custom plan folded away two
// lookups of responses), so every run's end was planned again. The test
// prepares each form as the store's connections do, executes it as a
// run's end six times, and reads the plan the seventh would use: a
// generic plan names the parameters ($14, the run's id), a custom one the
// values.
func TestRunEndKeepsAGenericPlan(t *testing.T) {
	dsn := pgtest.Schema(t)
	s, err := postgres.Open(t.Context(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []string
	for range 8 {
		r := storetest.BenchOwnRun()
		if err := s.StartRun(t.Context(), r, false, false); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	const types = `(text, text, bigint, bigint, bigint, bigint, bigint, text, text, text, bigint, bigint, bigint, text, text[], bigint)`
	args := func(id string) string {
		return `('completed', '', NULL, 1700000001, 1, 3, 4, 'You said: hello', NULL, NULL, 1, NULL, NULL, '` + id +
			`', ARRAY['queued', 'running'], 1)`
	}
	for _, ref := range []bool{false, true} {
		name := "end_plain"
		if ref {
			name = "end_ref"
		}
		if _, err := conn.Exec(t.Context(), `PREPARE `+name+types+` AS `+postgres.TransitionSQL(ref)); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids[:6] {
			if _, err := conn.Exec(t.Context(), `EXECUTE `+name+args(id)); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := conn.Query(t.Context(), `EXPLAIN (COSTS OFF) EXECUTE `+name+args(ids[6]))
		if err != nil {
			t.Fatal(err)
		}
		plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if text := strings.Join(plan, "\n"); !strings.Contains(text, "$14") {
			t.Errorf("output reference %v: the run's end is planned for its values, not once:\n%s", ref, text)
		}
	}
	r, err := s.GetRun(t.Context(), "", ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != runner.StatusCompleted || r.Output != "You said: hello" {
		t.Errorf("the prepared end wrote %s %q", r.Status, r.Output)
	}
}
