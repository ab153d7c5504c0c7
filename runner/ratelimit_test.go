package runner_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/sqlite"
)

// agentFunc adapts a function to runner.Agent.
type agentFunc func(ctx context.Context, req runner.Request, emit func(runner.Event) error) (runner.Result, error)

func (f agentFunc) Run(ctx context.Context, req runner.Request, emit func(runner.Event) error) (runner.Result, error) {
	return f(ctx, req, emit)
}

func serviceWith(t *testing.T, a runner.Agent) (*runner.Service, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := runner.NewService(t.Context(), runner.ServiceConfig{Store: st, Agent: a})
	if err != nil {
		t.Fatal(err)
	}
	return svc, st
}

func TestRateLimitedRunKeepsRetryAfter(t *testing.T) {
	limited := fmt.Errorf("openai provider: %w", &runner.RateLimitError{Seconds: 7, Detail: "upstream answered 429"})
	svc, _ := serviceWith(t, agentFunc(func(context.Context, runner.Request, func(runner.Event) error) (runner.Result, error) {
		return runner.Result{Attempts: 1}, limited
	}))
	h, err := svc.Start(t.Context(), spec("hi", false))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = finish(h)
	wantErr(t, err, runner.ErrRateLimited)
	if errors.Is(err, runner.ErrProvider) {
		t.Fatal("a rate limit must not read as a provider failure (502)")
	}
	var ra interface{ RetryAfter() int }
	if !errors.As(err, &ra) || ra.RetryAfter() != 7 {
		t.Fatalf("Finish lost the retry-after: %v", err)
	}
	r, err := svc.Get(t.Context(), runner.Scope{Admin: true}, h.Run().ID)
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, r, runner.StatusFailed, runner.ReasonRateLimited)
	if r.Error == nil || r.Error.Code != runner.ReasonRateLimited || !strings.Contains(r.Error.Message, "retry after 7s") || r.Attempts != 1 {
		t.Fatalf("run %+v error %+v", r, r.Error)
	}
}

func TestRateLimitErrorText(t *testing.T) {
	if got := (&runner.RateLimitError{Detail: "upstream answered 429"}).Error(); got != "rate limited: upstream answered 429" {
		t.Fatalf("without seconds: %q", got)
	}
	if got := (&runner.RateLimitError{Seconds: 3, Detail: "x"}).Error(); got != "rate limited: x (retry after 3s)" {
		t.Fatalf("with seconds: %q", got)
	}
}
