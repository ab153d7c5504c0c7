package fleet_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runedge/runedge/runner/store/postgres/pgtest"
)

// chat sends a chat completion of tenant to h with max_tokens 20 and
// returns the status and the error code ("" on success).
func (h *host) chat(tenant string) (int, string, error) {
	req, err := http.NewRequest("POST", h.url+"/v1/chat/completions",
		strings.NewReader(`{"model":"service","max_tokens":20,"messages":[{"role":"user","content":"hello there fleet"}]}`))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-service-tenant-id", tenant)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var e struct{ Error struct{ Code string } }
	json.Unmarshal(b, &e)
	return res.StatusCode, e.Error.Code, nil
}

// The fleet's limits: three hosts on one PostgreSQL, one tenant with a
// daily budget of B tokens and a rate of R requests per second hammered
// through all three at once. The tokens it is granted stay within B (its
// runs use less than they reserve, so the stated overshoot is 0 here), the
// requests let past the rate within R × T + one window of R (the fixed
// windows' edge), and another tenant on the same hosts is served
// throughout. Then a live reload on one host adds a budget for the other
// tenant that is already spent, and that host refuses its next request.
func TestFleetBudgetAndRateHoldAcrossHosts(t *testing.T) {
	const budget, rate = 60, 5
	dsn := pgtest.Schema(t)
	extra := fmt.Sprintf(`limits:
  tenant_rate_per_second: %d
  tenant_burst: %d
usage:
  budgets:
    - {name: hammered-daily, tenant: hammered, tokens: %d, window: day}
`, rate, rate, budget)
	hosts := []*host{
		startHost(t, hostSpec{id: "host-a", dsn: dsn, extra: extra}),
		startHost(t, hostSpec{id: "host-b", dsn: dsn, extra: extra}),
		startHost(t, hostSpec{id: "host-c", dsn: dsn, extra: extra}),
	}
	var served, quota, limited, other atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	began := time.Now()
	for i := range 9 {
		h := hosts[i%3]
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				code, ecode, err := h.chat("hammered")
				switch {
				case err != nil:
					t.Error(err)
					return
				case code == 200:
					served.Add(1)
				case code == 429 && ecode == "insufficient_quota":
					quota.Add(1)
				case code == 429 && ecode == "rate_limit_exceeded":
					limited.Add(1)
				default:
					other.Add(1)
					t.Errorf("hammered on %s: %d %s", h.id, code, ecode)
				}
			}
		})
	}
	// The calm tenant: 2 requests a second, round the hosts.
	calm := 0
	for i := 0; time.Since(began) < 3*time.Second; i++ {
		code, ecode, err := hosts[i%3].chat("calm")
		if err != nil || code != 200 {
			t.Errorf("calm tenant on %s: %d %s %v", hosts[i%3].id, code, ecode, err)
		}
		calm++
		time.Sleep(500 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	elapsed := time.Since(began)

	passed := served.Load() + quota.Load() // past the rate limit
	windows := int64(elapsed/time.Second) + 2
	t.Logf("%v: %d served, %d over budget, %d rate limited; calm tenant %d served", elapsed.Round(time.Millisecond),
		served.Load(), quota.Load(), limited.Load(), calm)
	if passed > rate*windows || passed < rate {
		t.Errorf("%d requests passed the fleet's rate of %d/s in %v (at most %d: R × T + one window)", passed, rate, elapsed, rate*windows)
	}
	if quota.Load() == 0 || limited.Load() == 0 {
		t.Errorf("neither limit bit: %d over budget, %d rate limited", quota.Load(), limited.Load())
	}
	// What the hammered tenant was granted, from the ledger, on any host.
	res, err := hosts[1].do("GET", "/runner/v1/usage?group_by=tenant&tenant_id=hammered", "")
	if err != nil {
		t.Fatal(err)
	}
	var u struct {
		Data []struct {
			Runs        int64 `json:"runs"`
			TotalTokens int64 `json:"total_tokens"`
		}
	}
	json.NewDecoder(res.Body).Decode(&u)
	res.Body.Close()
	if len(u.Data) != 1 || u.Data[0].TotalTokens > budget || u.Data[0].Runs != served.Load() {
		t.Fatalf("hammered's usage %+v; want %d runs within %d tokens", u.Data, served.Load(), budget)
	}

	// A live reload on host A: a budget of 1 token for the calm tenant,
	// which has spent more today. Its next request there is refused.
	a := hosts[0]
	b, err := os.ReadFile(a.config)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, "    - {name: calm-daily, tenant: calm, tokens: 1, window: day}\n"...)
	if err := os.WriteFile(a.config, b, 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, ecode, err := a.chat("calm")
		if err != nil {
			t.Fatal(err)
		}
		if code == 429 && ecode == "insufficient_quota" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("host A still serves the calm tenant after the reload: %d %s", code, ecode)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if code, _, err := hosts[1].chat("calm"); err != nil || code != 200 {
		t.Fatalf("host B, not reloaded, refuses the calm tenant: %d %v", code, err)
	}
}
