package builtin_test

import (
	"crypto/sha256"
	"slices"
	"sort"
	"testing"

	"github.com/tidwall/gjson"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/filters/body"
	"github.com/runedge/runedge/filters/builtin"
	"github.com/runedge/runedge/filters/compaction"
	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/plugins/runtime/runtimetest"
	"github.com/runedge/runedge/runner"
)

// chain builds the POST chain as the host does, with the default mapping
// plugin (built from source), a scripted agent on a real run service, and
// a tracer that records each stage's span.
func chain(t *testing.T) (filters.Handler, *filtertest.Runs, *tracetest.SpanRecorder) {
	t.Helper()
	a, err := auth.New(auth.Config{Tokens: []auth.Token{{Name: "app", Hash: sha256.Sum256([]byte("sk-test")), Tenant: "acme"}}})
	if err != nil {
		t.Fatal(err)
	}
	runs := filtertest.NewRuns(t, &filtertest.Agent{Result: runner.Result{Text: "Paris", FinishReason: "stop"}})
	p := runtimetest.Load(t, "github.com/runedge/runedge/plugins/openai")
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	h, err := builtin.Chain(builtin.Deps{Auth: a, Body: body.New(1<<20, 0), Runner: runs.Service,
		Plugins: builtin.Plugins{Request: p, Result: p}, Tracer: tp.Tracer("test"), Compaction: compaction.ProcessKeys()})
	if err != nil {
		t.Fatal(err)
	}
	return h, runs, spans
}

// stageSpans are the names of the ended stage spans, in the order the
// stages began.
func stageSpans(spans *tracetest.SpanRecorder) []string {
	ended := spans.Ended()
	sort.SliceStable(ended, func(i, j int) bool { return ended[i].StartTime().Before(ended[j].StartTime()) })
	out := make([]string, len(ended))
	for i, s := range ended {
		out[i] = s.Name()
	}
	return out
}

// The chain is built once (the plugin is the costly part) for its cases.
func TestChain(t *testing.T) {
	h, runs, spans := chain(t)
	t.Run("runs Order", func(t *testing.T) { testRunsOrder(t, h, runs, spans) })
	t.Run("stops at a refusal", func(t *testing.T) { testStopsAtRefusal(t, h, runs, spans) })
}

// A request runs every stage, once each, in Order, and gets the answer.
func testRunsOrder(t *testing.T, h filters.Handler, runs *filtertest.Runs, spans *tracetest.SpanRecorder) {
	before := len(spans.Ended())
	x, rec := filtertest.Exchange(filters.ChatCompletions,
		`{"model":"service","messages":[{"role":"user","content":"Capital of France?"}]}`, "Authorization", "Bearer sk-test")
	x.Body = nil // the body stage reads it
	if err := filtertest.Serve(t.Context(), h, x); err != nil {
		t.Fatal(err)
	}
	if got := stageSpans(spans)[before:]; !slices.Equal(got, builtin.Order) {
		t.Errorf("stages %q, want Order %q", got, builtin.Order)
	}
	if rec.Code != 200 || gjson.Get(rec.Body.String(), "choices.0.message.content").Str != "Paris" {
		t.Fatalf("reply %d %s", rec.Code, rec.Body)
	}
	r := runs.WaitEnded(t, 5e9)
	if r.Status != runner.StatusCompleted || r.TenantID != "acme" || r.Actor.ID != "app" || r.ID != rec.Header().Get(filters.HeaderRunID) {
		t.Errorf("run %+v", r)
	}
}

// A stage that refuses ends the chain there: no later stage runs, no body
// is read for a caller without a valid token, and no run is created.
func testStopsAtRefusal(t *testing.T, h filters.Handler, runs *filtertest.Runs, spans *tracetest.SpanRecorder) {
	countRuns := func() int {
		page, err := runs.Service.List(t.Context(), runner.Scope{Admin: true}, runner.ListQuery{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(page.Data)
	}
	had := countRuns()
	for _, c := range []struct {
		name, token, body string
		status            int
		stages            []string
	}{
		{"bad token", "Bearer nope", `{"model":"service","messages":[{"role":"user","content":"hi"}]}`, 401, []string{"auth"}},
		{"bad JSON", "Bearer sk-test", `{"model":`, 400, []string{"auth", "body", "model"}},
		{"other model", "Bearer sk-test", `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`, 404, []string{"auth", "body", "model"}},
	} {
		before := len(spans.Ended())
		x, rec := filtertest.Exchange(filters.ChatCompletions, c.body, "Authorization", c.token)
		x.Body = nil
		filtertest.Serve(t.Context(), h, x)
		if rec.Code != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, rec.Code, rec.Body, c.status)
		}
		if got := stageSpans(spans)[before:]; !slices.Equal(got, c.stages) {
			t.Errorf("%s: stages %q, want %q", c.name, got, c.stages)
		}
		if c.status == 401 && x.Body != nil {
			t.Errorf("%s: the body was read", c.name)
		}
		if n := countRuns(); n != had {
			t.Errorf("%s: %d runs, want none created", c.name, n-had)
		}
	}
}

// Order names each stage once; auth comes first and body right after it.
func TestOrder(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range builtin.Order {
		if seen[n] {
			t.Errorf("%s twice in Order", n)
		}
		seen[n] = true
	}
	if len(builtin.Order) < 2 || builtin.Order[0] != "auth" || builtin.Order[1] != "body" {
		t.Errorf("Order %q: auth then body must come first", builtin.Order)
	}
}
