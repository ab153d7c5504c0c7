package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/runedge/runedge/internal/httproute"
)

// samplePath fills a route pattern's wildcards with an id.
func samplePath(pattern string) string {
	return regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(pattern, "resp_x1")
}

// Every route of the table, hit on a real server with each of its methods,
// is counted and logged under the route's label, never "unknown"; paths
// that match no route are "unknown".
func TestEveryRouteHasItsLabel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, hs, logs := loggingServer(t, ctx)
	defer srv.Close(ctx)
	defer hs.Close()

	type hit struct{ method, path, label string }
	var hits []hit
	for _, r := range httproute.Table {
		for _, m := range r.Methods {
			method := m.Method
			if method == httproute.AnyMethod {
				method = http.MethodGet
			}
			hits = append(hits, hit{method, samplePath(r.Pattern), r.Label})
		}
	}
	junk := []hit{{"GET", "/v1/nothing", httproute.LabelUnknown}, {"POST", "/runner/v2/runs", httproute.LabelUnknown}}
	for _, h := range append(hits, junk...) {
		body := ""
		switch h.path {
		case "/v1/chat/completions":
			body = chatBody
		case "/v1/responses":
			body = `{"model":"service","input":"hi"}`
		}
		req, _ := http.NewRequest(h.method, hs.URL+h.path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tokApp)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}

	// The metrics: one series per method and label, none unknown but the
	// junk.
	fams, err := srv.metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	counted := map[string]float64{} // "label method" → requests
	for _, f := range fams {
		if f.GetName() != "runedge_http_requests_total" {
			continue
		}
		for _, m := range f.Metric {
			var ep, method string
			for _, l := range m.Label {
				switch l.GetName() {
				case "endpoint":
					ep = l.GetValue()
				case "method":
					method = l.GetValue()
				}
			}
			counted[ep+" "+method] += m.Counter.GetValue()
		}
	}
	want := map[string]float64{}
	for _, h := range append(hits, junk...) {
		want[h.label+" "+h.method]++
	}
	for k, n := range want {
		if counted[k] != n {
			t.Errorf("runedge_http_requests_total{endpoint,method = %s}: %v, want %v", k, counted[k], n)
		}
	}
	for k, n := range counted {
		if want[k] == 0 {
			t.Errorf("unexpected series {endpoint,method = %s}: %v", k, n)
		}
	}

	// The access log: each line names the label of its path.
	seen := 0
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	for sc.Scan() {
		var line struct{ Msg, Method, Path, Endpoint string }
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Msg != "request" {
			continue
		}
		for _, h := range append(hits, junk...) {
			if h.method == line.Method && h.path == line.Path {
				seen++
				if line.Endpoint != h.label {
					t.Errorf("access log: %s %s has endpoint %q, want %q", line.Method, line.Path, line.Endpoint, h.label)
				}
			}
		}
	}
	if seen < len(hits)+len(junk) {
		t.Errorf("%d access log lines for %d requests:\n%s", seen, len(hits)+len(junk), logs.String())
	}
}

// operations binds the route table and nothing else: every operation a
// route names (a method's or its upgrade's) has one row, every row is named
// by a route, a row says one way it is served, and a built generation has
// a chain for every row served through one.
func TestOperationsBindTheRouteTable(t *testing.T) {
	named := map[httproute.Op]bool{}
	for _, r := range httproute.Table {
		for _, m := range r.Methods {
			named[m.Op] = true
		}
		if r.Upgrade != "" {
			named[r.Upgrade] = true
		}
	}
	for op := range named {
		if _, ok := operations[op]; !ok {
			t.Errorf("operation %s of the route table has no row in operations", op)
		}
	}
	h := start(t, nil)
	g := h.srv.gen.Load()
	apiRows := 0
	for op, o := range operations {
		if !named[op] {
			t.Errorf("operations row %s is named by no route", op)
		}
		ways := 0
		for _, set := range []bool{o.chain != "", o.handler != nil, o.build != nil, o.direct != nil} {
			if set {
				ways++
			}
		}
		if ways != 1 {
			t.Errorf("operations row %s is served %d ways, want 1", op, ways)
		}
		if o.direct == nil && o.errors == "" {
			t.Errorf("operations row %s names no error shape", op)
		}
		if o.handler == nil && o.body != noBody {
			t.Errorf("operations row %s reads a body but has no handler", op)
		}
		switch {
		case o.chain != "":
			if g.chains[o.chain] == nil {
				t.Errorf("operations row %s: the generation has no %s chain", op, o.chain)
			}
		case o.handler != nil || o.build != nil:
			apiRows++
			if g.api[op] == nil {
				t.Errorf("operations row %s: the generation built no chain", op)
			}
		}
	}
	if len(g.api) != apiRows {
		t.Errorf("the generation has %d API chains, operations %d rows with a handler or a build", len(g.api), apiRows)
	}
}
