package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner"
)

func (h *harness) chatAs(tok, tenant string) (*http.Response, []byte) {
	h.t.Helper()
	res := h.do("POST", "/v1/chat/completions", `{"model":"service","max_tokens":20,"messages":[{"role":"user","content":"hello there budget"}]}`,
		"Authorization", "Bearer "+tok, "x-service-tenant-id", tenant)
	return res, body(h.t, res)
}

// tenantRuns sums the usage of tenant's runs as they recorded it.
func (h *harness) tenantRuns(tenant string) (n int, tokens int64) {
	h.t.Helper()
	res := h.do("GET", "/runner/v1/runs?limit=100&tenant_id="+tenant, "", "Authorization", "Bearer "+tokAdmin)
	var page runner.Page
	if err := json.Unmarshal(body(h.t, res), &page); err != nil {
		h.t.Fatal(err)
	}
	for _, r := range page.Data {
		if r.Usage != nil {
			tokens += int64(r.Usage.InputTokens + r.Usage.OutputTokens)
		}
	}
	return len(page.Data), tokens
}

// A tenant's daily token budget: runs are admitted while their estimate
// fits, then refused with 429 insufficient_quota naming the budget, its
// reset and the x-ratelimit-*-tokens headers, before a run exists; the
// tokens granted stay within the budget; another tenant is unaffected; a
// reload that lowers the budget refuses the next request, one that raises
// it lets it through.
func TestBudgetRefusesBeforeTheRun(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.Usage.Budgets = []config.Budget{{Name: "acme-daily", Tenant: "acme", Tokens: 100, Window: "day"}}
	})
	ok := 0
	var refused []byte
	var refusal http.Header
	for range 20 {
		res, b := h.chatAs(tokAcme, "acme")
		if res.StatusCode == 429 {
			refused, refusal = b, res.Header
			break
		}
		if res.StatusCode != 200 {
			t.Fatalf("%d %s", res.StatusCode, b)
		}
		if res.Header.Get("x-ratelimit-limit-tokens") != "100" || res.Header.Get("x-ratelimit-remaining-tokens") == "" {
			t.Fatalf("an admitted run's headers: %v", res.Header)
		}
		ok++
	}
	if refused == nil || ok == 0 {
		t.Fatalf("%d requests admitted, none refused", ok)
	}
	var e struct {
		Error struct{ Message, Type, Code string }
	}
	if err := json.Unmarshal(refused, &e); err != nil || e.Error.Type != "insufficient_quota" || e.Error.Code != "insufficient_quota" ||
		!strings.Contains(e.Error.Message, `"acme-daily"`) || !strings.Contains(e.Error.Message, "resets at") {
		t.Fatalf("refusal: %s", refused)
	}
	if refusal.Get("x-ratelimit-limit-tokens") != "100" || refusal.Get("x-ratelimit-reset-tokens") == "" ||
		refusal.Get("Retry-After") == "" || refusal.Get("x-service-run-id") != "" {
		t.Fatalf("refusal headers: %v", refusal)
	}
	if rem, _ := strconv.Atoi(refusal.Get("x-ratelimit-remaining-tokens")); rem >= 100 {
		t.Fatalf("remaining %d", rem)
	}
	runs, tokens := h.tenantRuns("acme")
	if runs != ok || tokens > 100 {
		t.Fatalf("acme: %d runs (%d admitted) used %d tokens of a budget of 100", runs, ok, tokens)
	}
	if res, b := h.chatAs(tokApp, "globex"); res.StatusCode != 200 || res.Header.Get("x-ratelimit-limit-tokens") != "" {
		t.Fatalf("globex, without a budget: %d %v %s", res.StatusCode, res.Header, b)
	}

	// Raised by a reload: the next request is admitted.
	h.cfg.Usage.Budgets[0].Tokens = 10_000
	if err := h.srv.Reload(context.Background(), h.cfg); err != nil {
		t.Fatal(err)
	}
	if res, b := h.chatAs(tokAcme, "acme"); res.StatusCode != 200 || res.Header.Get("x-ratelimit-limit-tokens") != "10000" {
		t.Fatalf("after raising the budget: %d %s", res.StatusCode, b)
	}
	// Lowered to what was spent: the next request is refused.
	_, tokens = h.tenantRuns("acme")
	h.cfg.Usage.Budgets[0].Tokens = tokens + 1
	if err := h.srv.Reload(context.Background(), h.cfg); err != nil {
		t.Fatal(err)
	}
	if res, b := h.chatAs(tokAcme, "acme"); res.StatusCode != 429 || !strings.Contains(string(b), "insufficient_quota") {
		t.Fatalf("after lowering the budget to %d: %d %s", tokens+1, res.StatusCode, b)
	}
}
