package api

import (
	"context"
	"sync"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/runner"
)

// Reading a stored stream (stream resumption, the native events API) costs
// what a page of it holds, not what the stream holds: the store is read
// from the reader's cursor a few stored batches at a time, and each tenant
// may have only limits.history.max_replays_per_tenant readers at once.

// replayBatches is how many stored batches (each at most a few hundred
// events) one read of a stored stream takes.
const replayBatches = 4

// writeStored writes the run's stored events after sequence number after,
// page by page, and reports the last sequence number written (after when
// none was).
func writeStored(ctx context.Context, x *filters.Exchange, h runner.HistoryStore, runID string, after int, withIDs bool) (int, error) {
	for {
		evs, err := h.Events(ctx, runID, after, replayBatches)
		if err != nil {
			return after, err
		}
		if len(evs) == 0 {
			return after, nil
		}
		if err := filters.WriteEvents(x.Reply, evs, withIDs); err != nil {
			return after, err
		}
		after = evs[len(evs)-1].Seq
	}
}

// Replays counts each tenant's stream readers (the zero value is ready).
type Replays struct {
	mu sync.Mutex
	n  map[string]int
}

// acquire admits one more reader of tenant, or answers 429 when it has
// max (0: no bound) already; release ends it.
func (l *Replays) acquire(tenant string, max int) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if max > 0 && l.n[tenant] >= max {
		e := apierr.New(apierr.CodeRateLimited, "this tenant reads as many streams at once as it may (limits.history.max_replays_per_tenant); retry when one ends")
		e.RetryAfter = 1
		return nil, e
	}
	if l.n == nil {
		l.n = map[string]int{}
	}
	l.n[tenant]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.n[tenant]--; l.n[tenant] == 0 {
			delete(l.n, tenant)
		}
	}, nil
}

// replaySlot admits the caller's stream reading (its tenant's share).
func (hs *Handlers) replaySlot(x *filters.Exchange) (func(), error) {
	return hs.Replays.acquire(x.Identity.TenantID, hs.MaxReplaysPerTenant)
}

// FirstEvents reads run id's first stored events page by page
// (replayBatches batches, a SQL LIMIT, per read) until it has max: the
// operator page's event view costs what it shows, however long the stream.
// h nil (a store that keeps no history) has none.
func FirstEvents(ctx context.Context, h runner.HistoryStore, id string, max int) ([]runner.StoredEvent, error) {
	var out []runner.StoredEvent
	for after := -1; h != nil && len(out) < max; {
		evs, err := h.Events(ctx, id, after, replayBatches)
		if err != nil || len(evs) == 0 {
			return out, err
		}
		out = append(out, evs...)
		after = evs[len(evs)-1].Seq
	}
	return out, nil
}
