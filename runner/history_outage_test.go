package runner_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/runedge/runedge/runner"
)

// outageOn fails GetRun of one run as a store that cannot be reached does.
type outageOn struct {
	runner.Store
	id string
}

func (o *outageOn) GetRun(ctx context.Context, tenantID, id string) (runner.Run, error) {
	if id == o.id {
		return runner.Run{}, fmt.Errorf("%w: connection refused", runner.ErrUnavailable)
	}
	return o.Store.GetRun(ctx, tenantID, id)
}

// A store that fails while previous_response_id is resolved is the
// store's failure (unavailable), never the client's
// previous_response_not_found; only a response that is not there is.
func TestPreviousResponseStoreFailureIsNotNotFound(t *testing.T) {
	o := &outageOn{}
	e := newEnv(t, withConfig(func(c *runner.ServiceConfig) {
		o.Store = c.Store
		c.History, _ = c.Store.(runner.HistoryStore)
		c.Store = o
	}))
	first := spec("remember me", false)
	first.Endpoint = "responses"
	h, err := e.svc.Start(t.Context(), first)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := finish(h); err != nil {
		t.Fatal(err)
	}
	prev := "resp_" + h.Run().ID[len("run_"):]
	next := spec("and now?", false)
	next.Endpoint = "responses"
	next.Request.PreviousResponseID = prev

	o.id = h.Run().ID
	_, err = e.svc.Start(t.Context(), next)
	if !errors.Is(err, runner.ErrUnavailable) || errors.Is(err, runner.ErrPreviousResponseNotFound) {
		t.Fatalf("store outage while resolving previous_response_id: err = %v, want ErrUnavailable only", err)
	}
	o.id = ""
	next.Request.PreviousResponseID = "resp_unknown"
	if _, err = e.svc.Start(t.Context(), next); !errors.Is(err, runner.ErrPreviousResponseNotFound) {
		t.Fatalf("unknown previous response: err = %v", err)
	}
}
