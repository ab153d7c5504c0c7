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

// linkOutageOn fails ResponseLink of o's run as a store that cannot be
// reached does.
type linkOutageOn struct {
	runner.HistoryStore
	o *outageOn
}

func (l *linkOutageOn) ResponseLink(ctx context.Context, tenantID, runID string) (runner.ResponseLink, error) {
	if runID == l.o.id {
		return runner.ResponseLink{}, fmt.Errorf("%w: connection refused", runner.ErrUnavailable)
	}
	return l.HistoryStore.(runner.ResponseLinker).ResponseLink(ctx, tenantID, runID)
}

// plainHistory is a HistoryStore without ResponseLinker: the service
// reads the response's record and its run.
type plainHistory struct{ runner.HistoryStore }

// A store that fails while previous_response_id is resolved is the
// store's failure (unavailable), never the client's
// previous_response_not_found; only a response that is not there is:
// with a store that reads the response's link in one lookup, and with
// one that reads its record and its run.
func TestPreviousResponseStoreFailureIsNotNotFound(t *testing.T) {
	for _, linker := range []bool{true, false} {
		t.Run(fmt.Sprintf("linker=%v", linker), func(t *testing.T) {
			o := &outageOn{}
			e := newEnv(t, withConfig(func(c *runner.ServiceConfig) {
				o.Store = c.Store
				h, _ := c.Store.(runner.HistoryStore)
				c.History = &plainHistory{h}
				if linker {
					c.History = &linkOutageOn{HistoryStore: h, o: o}
				}
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
		})
	}
}
