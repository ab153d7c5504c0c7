package docs_test

import (
	"strings"
	"testing"

	"github.com/runedge/runedge/internal/httproute"
)

// TestEveryRouteDocumented: every method of every route the host serves
// (internal/httproute.Table) has a row in docs/api.md's endpoints table
// naming its method and its path, and a route that upgrades to a WebSocket
// has a "GET (WebSocket)" row.
func TestEveryRouteDocumented(t *testing.T) {
	var rows [][2]string // method cell, path cell
	for _, line := range tableRows(t, "docs/api.md", "| method | path |") {
		if cells := strings.Split(line, "|"); len(cells) > 3 {
			rows = append(rows, [2]string{cells[1], cells[2]})
		}
	}
	if len(rows) < 10 {
		t.Fatalf("docs/api.md: found %d endpoint rows; the table's header changed?", len(rows))
	}
	documented := func(method, pattern string) bool {
		for _, r := range rows {
			methods := strings.Split(strings.TrimSpace(r[0]), ", ")
			for _, m := range methods {
				if m == method && strings.Contains(r[1], "`"+pattern+"`") {
					return true
				}
			}
		}
		return false
	}
	for _, rt := range httproute.Table {
		for _, m := range rt.Methods {
			method := m.Method
			if method == httproute.AnyMethod {
				method = "GET"
			}
			if !documented(method, rt.Pattern) {
				t.Errorf("docs/api.md's endpoints table lacks %s %s (%s)", method, rt.Pattern, m.Op)
			}
		}
		if rt.Upgrade != "" && !documented("GET (WebSocket)", rt.Pattern) {
			t.Errorf("docs/api.md's endpoints table lacks GET (WebSocket) %s", rt.Pattern)
		}
	}
}

// TestEveryEndpointLabelDocumented: every endpoint label of the route table
// is named in docs/observability.md, where the metrics are described.
func TestEveryEndpointLabelDocumented(t *testing.T) {
	page := read(t, "docs/observability.md")
	for _, rt := range httproute.Table {
		if !strings.Contains(page, "`"+rt.Label+"`") {
			t.Errorf("docs/observability.md does not name the endpoint label %q (%s)", rt.Label, rt.Pattern)
		}
	}
}
