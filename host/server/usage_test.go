package server

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/runedge/runedge/host/api"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner"
)

func (h *harness) usage(token, query string) api.UsageList {
	h.t.Helper()
	res := h.do("GET", "/runner/v1/usage?"+query, "", "Authorization", "Bearer "+token)
	b := body(h.t, res)
	if res.StatusCode != 200 {
		h.t.Fatalf("usage?%s: %d %s", query, res.StatusCode, b)
	}
	var l api.UsageList
	if err := json.Unmarshal(b, &l); err != nil {
		h.t.Fatal(err)
	}
	return l
}

// GET /runner/v1/usage sums the runs' recorded usage per tenant and day; a
// tenant's token sees only its tenant, an admin token every tenant; the
// cost follows usage.prices; the tenant token counters follow the ledger.
func TestUsageAPI(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.Admin.MetricsPublic = true
		c.Usage.Prices = []config.Price{{Provider: config.ProviderOffline, Input: 2, Output: 8}}
	})
	for i := range 6 {
		tok, tenant := tokAcme, "acme"
		if i%3 == 0 {
			tok, tenant = tokApp, "globex"
		}
		res := h.do("POST", "/v1/chat/completions", fmt.Sprintf(`{"model":"service","messages":[{"role":"user","content":"say %d words here"}]}`, i),
			"Authorization", "Bearer "+tok, "x-service-tenant-id", tenant, "x-service-actor-id", fmt.Sprintf("u-%d", i%2))
		if b := body(t, res); res.StatusCode != 200 {
			t.Fatalf("%d %s", res.StatusCode, b)
		}
	}
	// What the runs recorded, per tenant and day.
	res := h.do("GET", "/runner/v1/runs?limit=100", "", "Authorization", "Bearer "+tokAdmin)
	var page runner.Page
	if err := json.Unmarshal(body(t, res), &page); err != nil {
		t.Fatal(err)
	}
	type key struct {
		tenant string
		day    int64
	}
	want := map[key][2]int64{}
	for _, r := range page.Data {
		k := key{r.TenantID, (*r.EndedAt / 86400) * 86400}
		w := want[k]
		want[k] = [2]int64{w[0] + int64(r.Usage.InputTokens), w[1] + int64(r.Usage.OutputTokens)}
	}
	all := h.usage(tokAdmin, "group_by=tenant&bucket=day")
	if len(all.Data) != len(want) || len(want) < 2 {
		t.Fatalf("admin: %d rows, want %d: %+v", len(all.Data), len(want), all.Data)
	}
	for _, r := range all.Data {
		w := want[key{*r.TenantID, r.StartTime / 86400 * 86400}]
		if r.InputTokens != w[0] || r.OutputTokens != w[1] || r.TotalTokens != w[0]+w[1] || r.ActorID != nil {
			t.Errorf("%s: %+v, want input %d output %d (the runs' recorded usage)", *r.TenantID, r, w[0], w[1])
		}
		if cost := float64(r.InputTokens)*2e-6 + float64(r.OutputTokens)*8e-6; r.Cost < cost*0.999 || r.Cost > cost*1.001 {
			t.Errorf("%s: cost %g, want %g", *r.TenantID, r.Cost, cost)
		}
	}
	// acme's token: acme only, whatever it asks for.
	for _, q := range []string{"group_by=tenant,actor", "group_by=tenant&tenant_id=globex", "tenant_id=acme&group_by=tenant"} {
		for _, r := range h.usage(tokAcme, q).Data {
			if r.TenantID == nil || *r.TenantID != "acme" {
				t.Errorf("acme's token, %s: row %+v", q, r)
			}
		}
	}
	if l := h.usage(tokAcme, "group_by=tenant&tenant_id=globex"); len(l.Data) != 0 {
		t.Errorf("acme's token sees globex: %+v", l.Data)
	}
	if l := h.usage(tokAcme, "group_by=actor"); len(l.Data) != 2 || l.Data[0].TenantID != nil {
		t.Errorf("acme by actor: %+v", l.Data)
	}
	// Refusals are 400s naming the parameter.
	for _, q := range []string{"bucket=week", "group_by=model", "from=x", "from=10&to=5", "limit=0"} {
		res := h.do("GET", "/runner/v1/usage?"+q, "", "Authorization", "Bearer "+tokAdmin)
		if b := body(t, res); res.StatusCode != 400 {
			t.Errorf("usage?%s: %d %s", q, res.StatusCode, b)
		}
	}
	f := h.scrape("")
	for k, w := range want {
		if got, _ := sample(t, f, "runedge_tenant_tokens_total", "tenant="+tenantLabel(k.tenant), "type=input"); got != float64(w[0]) {
			t.Errorf("runedge_tenant_tokens_total{tenant=%s,type=input} = %v, want %d", k.tenant, got, w[0])
		}
	}
}

// tenantLabel is the metrics' label of a tenant the harness does not
// configure.
func tenantLabel(t string) string {
	if t == "acme" || t == "default" {
		return t
	}
	return "other"
}
