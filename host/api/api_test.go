package api

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/sqlite"
)

// handlers are Handlers on a real run service over a real SQLite file,
// with the response history and the conversations the store keeps.
func handlers(t *testing.T) *Handlers {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := runner.NewService(t.Context(), runner.ServiceConfig{Store: st, History: st, Conversations: st,
		Agent: &filtertest.Agent{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return &Handlers{Runs: svc, Replays: &Replays{}, MaxReplaysPerTenant: 1}
}

// call runs h as tenant on method and pattern (with its path values: name,
// value pairs) and body, rendering its error as the edge does; it returns
// the status and the body.
func call(t *testing.T, h filters.HandlerFunc, tenant, method, pattern, body string, path ...string) (int, string) {
	t.Helper()
	x, rec := filtertest.Exchange(filters.Responses, body)
	x.Request.Method, x.Request.Pattern = method, pattern
	for i := 0; i+1 < len(path); i += 2 {
		x.Request.SetPathValue(path[i], path[i+1])
	}
	x.Identity.TenantID = tenant
	filtertest.Serve(context.Background(), h, x)
	return rec.Code, rec.Body.String()
}

func TestModels(t *testing.T) {
	if st, b := call(t, Models, "", "GET", "/v1/models", ""); st != 200 || gjson.Get(b, "data.0.id").Str != "service" {
		t.Fatalf("list: %d %s", st, b)
	}
	if st, b := call(t, Models, "", "GET", "/v1/models/{model}", "", "model", "service"); st != 200 || gjson.Get(b, "object").Str != "model" {
		t.Fatalf("one: %d %s", st, b)
	}
	if st, b := call(t, Models, "", "GET", "/v1/models/{model}", "", "model", "gpt-5"); st != 404 {
		t.Fatalf("unknown model: %d %s", st, b)
	}
}

// A conversation is its tenant's alone: another tenant reads a 404, as
// for an unknown id; metadata breaking OpenAI's rules is a 400.
func TestConversationsScopedToTenant(t *testing.T) {
	hs := handlers(t)
	st, b := call(t, hs.CreateConversation, "acme", "POST", "/v1/conversations", `{"metadata":{"topic":"demo"}}`)
	if st != 200 {
		t.Fatalf("create: %d %s", st, b)
	}
	id := gjson.Get(b, "id").Str
	if st, b := call(t, hs.GetConversation, "acme", "GET", "/v1/conversations/{id}", "", "id", id); st != 200 || gjson.Get(b, "metadata.topic").Str != "demo" {
		t.Fatalf("get: %d %s", st, b)
	}
	if st, b := call(t, hs.GetConversation, "other", "GET", "/v1/conversations/{id}", "", "id", id); st != 404 {
		t.Fatalf("another tenant's conversation: %d %s", st, b)
	}
	if st, b := call(t, hs.UpdateConversation, "acme", "POST", "/v1/conversations/{id}", `{"metadata":{"a":1}}`, "id", id); st != 400 || gjson.Get(b, "error.param").Str != "metadata" {
		t.Fatalf("non-string metadata: %d %s", st, b)
	}
	if st, b := call(t, hs.DeleteConversation, "acme", "DELETE", "/v1/conversations/{id}", "", "id", id); st != 200 || !gjson.Get(b, "deleted").Bool() {
		t.Fatalf("delete: %d %s", st, b)
	}
	if st, _ := call(t, hs.GetConversation, "acme", "GET", "/v1/conversations/{id}", "", "id", id); st != 404 {
		t.Fatalf("deleted conversation: %d", st)
	}
}

// A stored response id that is not one (no resp_ prefix, unknown) is a
// 404 naming it, never a 400 or 500.
func TestStoredResponseUnknown(t *testing.T) {
	hs := handlers(t)
	for _, id := range []string{"run_1", "resp_unknown"} {
		st, b := call(t, hs.GetResponse, "acme", "GET", "/v1/responses/{id}", "", "id", id)
		if st != 404 || gjson.Get(b, "error.message").Str == "" {
			t.Fatalf("%s: %d %s", id, st, b)
		}
	}
}

func TestListRunsRefusesBadQuery(t *testing.T) {
	hs := handlers(t)
	for _, q := range []string{"?limit=0", "?limit=101", "?status=bogus"} {
		x, rec := filtertest.Exchange(filters.Native, "")
		x.Request.Method, x.Request.URL.RawQuery = "GET", q[1:]
		filtertest.Serve(context.Background(), filters.HandlerFunc(hs.ListRuns), x)
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", q, rec.Code, rec.Body)
		}
	}
}

// A tenant reads at most MaxReplaysPerTenant streams at once; another
// tenant is not held up by it, and a released slot is free again.
func TestReplaysPerTenant(t *testing.T) {
	var r Replays
	release, err := r.acquire("acme", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.acquire("acme", 1); err == nil {
		t.Fatal("second reader of acme admitted")
	}
	other, err := r.acquire("other", 1)
	if err != nil {
		t.Fatal(err)
	}
	other()
	release()
	if _, err := r.acquire("acme", 1); err != nil {
		t.Fatalf("after release: %v", err)
	}
}
