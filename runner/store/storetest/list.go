package storetest

import (
	"slices"
	"testing"

	"github.com/runedge/runedge/runner"
)

func ids(runs []runner.Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.ID
	}
	return out
}

func list(t *testing.T, s runner.Store, q runner.ListQuery) ([]string, bool) {
	t.Helper()
	runs, more, err := s.ListRuns(ctx(t), q)
	if err != nil {
		t.Fatalf("ListRuns(%+v): %v", q, err)
	}
	return ids(runs), more
}

func testListPaging(t *testing.T, s runner.Store) {
	// All in the same second: order must not depend on created_at.
	created := mustCreate(t, s, "acme", runner.StatusRunning, 7, nil)
	mustCreate(t, s, "globex", runner.StatusRunning, 3, nil)
	newest := slices.Clone(created)
	slices.Reverse(newest)

	got, more := list(t, s, runner.ListQuery{TenantID: "acme"})
	if !slices.Equal(got, newest) || more {
		t.Fatalf("ListRuns(acme) = %v (has_more %v), want %v (false)", got, more, newest)
	}

	var paged []string
	after := ""
	for page := 0; ; page++ {
		got, more := list(t, s, runner.ListQuery{TenantID: "acme", Limit: 3, After: after})
		paged = append(paged, got...)
		if page > 5 {
			t.Fatal("paging does not end")
		}
		if !more {
			if len(got) != 1 {
				t.Fatalf("last page has %d runs, want 1", len(got))
			}
			break
		}
		if len(got) != 3 {
			t.Fatalf("page %d has %d runs, want 3", page, len(got))
		}
		after = got[len(got)-1]
	}
	if !slices.Equal(paged, newest) {
		t.Fatalf("paging gave %v, want %v", paged, newest)
	}

	if got, more := list(t, s, runner.ListQuery{TenantID: "acme", After: created[0]}); len(got) != 0 || more {
		t.Fatalf("page after the oldest run = %v (has_more %v), want empty", got, more)
	}
	if got, more := list(t, s, runner.ListQuery{TenantID: "acme", After: "run_unknown"}); len(got) != 0 || more {
		t.Fatalf("page after an unknown id = %v (has_more %v), want empty", got, more)
	}
	all, _ := list(t, s, runner.ListQuery{})
	if len(all) != 10 {
		t.Fatalf("ListRuns across tenants = %d runs, want 10", len(all))
	}
}

func testListFilters(t *testing.T, s runner.Store) {
	inSession := mustCreate(t, s, "acme", runner.StatusRunning, 2, func(r *runner.Run) { r.SessionID = "sess_x" })
	queued := mustCreate(t, s, "acme", runner.StatusQueued, 2, nil)
	mustCreate(t, s, "globex", runner.StatusQueued, 1, func(r *runner.Run) { r.SessionID = "sess_x" })

	got, _ := list(t, s, runner.ListQuery{TenantID: "acme", SessionID: "sess_x"})
	if want := []string{inSession[1], inSession[0]}; !slices.Equal(got, want) {
		t.Fatalf("session filter = %v, want %v", got, want)
	}
	got, _ = list(t, s, runner.ListQuery{TenantID: "acme", Status: runner.StatusQueued})
	if want := []string{queued[1], queued[0]}; !slices.Equal(got, want) {
		t.Fatalf("status filter = %v, want %v", got, want)
	}
	got, _ = list(t, s, runner.ListQuery{Status: runner.StatusQueued})
	if len(got) != 3 {
		t.Fatalf("status filter across tenants = %d runs, want 3", len(got))
	}
	got, _ = list(t, s, runner.ListQuery{TenantID: "acme", Status: runner.StatusCompleted})
	if len(got) != 0 {
		t.Fatalf("no completed runs, got %v", got)
	}
	// Filters and the cursor combine.
	got, more := list(t, s, runner.ListQuery{TenantID: "acme", SessionID: "sess_x", Limit: 1})
	if !slices.Equal(got, []string{inSession[1]}) || !more {
		t.Fatalf("first filtered page = %v (more %v)", got, more)
	}
	got, more = list(t, s, runner.ListQuery{TenantID: "acme", SessionID: "sess_x", Limit: 1, After: got[0]})
	if !slices.Equal(got, []string{inSession[0]}) || more {
		t.Fatalf("second filtered page = %v (more %v)", got, more)
	}
}

func testListLimits(t *testing.T, s runner.Store) {
	mustCreate(t, s, "acme", runner.StatusRunning, 101, nil)
	if got, more := list(t, s, runner.ListQuery{TenantID: "acme"}); len(got) != 20 || !more {
		t.Fatalf("default limit: %d runs (more %v), want 20 (true)", len(got), more)
	}
	if got, more := list(t, s, runner.ListQuery{TenantID: "acme", Limit: 1000}); len(got) != 100 || !more {
		t.Fatalf("limit 1000: %d runs (more %v), want the maximum 100 (true)", len(got), more)
	}
	if got, more := list(t, s, runner.ListQuery{TenantID: "acme", Limit: 101}); len(got) != 100 || !more {
		t.Fatalf("limit 101: %d runs (more %v), want 100 (true)", len(got), more)
	}
}

func testListCursorTenantScoped(t *testing.T, s runner.Store) {
	mustCreate(t, s, "acme", runner.StatusRunning, 3, nil)
	other := mustCreate(t, s, "globex", runner.StatusRunning, 1, nil)
	// Another tenant's id as cursor reads as unknown: an empty page, never
	// a page that reveals where that run sits.
	if got, more := list(t, s, runner.ListQuery{TenantID: "acme", After: other[0]}); len(got) != 0 || more {
		t.Fatalf("cursor of another tenant gave %v (more %v), want empty", got, more)
	}
	// Admin (no tenant) may page with any id.
	if got, _ := list(t, s, runner.ListQuery{After: other[0]}); len(got) != 3 {
		t.Fatalf("admin cursor gave %d runs, want 3", len(got))
	}
}
