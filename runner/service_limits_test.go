package runner_test

import (
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
)

// A token's runs are bounded whatever tenants it names, and background
// runs have a bound of their own; each slot comes back with Finish.
func TestMaxInFlightPerTokenAndBackground(t *testing.T) {
	e := newEnv(t, withDelay(5*time.Millisecond), withConfig(func(c *runner.ServiceConfig) {
		c.MaxInFlightPerToken, c.MaxBackground = 2, 1
	}))
	as := func(token, tenant string, background bool) runner.StartSpec {
		s := spec(longText(20), false)
		s.Token, s.TenantID, s.Request.Background = token, tenant, background
		return s
	}
	a1, err := e.svc.Start(t.Context(), as("app", "t1", false))
	if err != nil {
		t.Fatal(err)
	}
	a2, err := e.svc.Start(t.Context(), as("app", "t2", false))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Start(t.Context(), as("app", "t3", false))
	wantErr(t, err, runner.ErrTokenBusy)
	other, err := e.svc.Start(t.Context(), as("other", "t3", true))
	if err != nil {
		t.Fatalf("another token: %v", err)
	}
	_, err = e.svc.Start(t.Context(), as("third", "t4", true))
	wantErr(t, err, runner.ErrBackgroundBusy)
	for _, h := range []*runner.Handle{a1, a2, other} {
		finish(h)
	}
	for _, s := range []runner.StartSpec{as("app", "t3", false), as("third", "t4", true)} {
		h, err := e.svc.Start(t.Context(), s)
		if err != nil {
			t.Fatalf("slot not released after Finish: %v", err)
		}
		finish(h)
	}
}
