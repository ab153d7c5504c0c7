package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/api"
	"github.com/runedge/runedge/host/internal/admin/ui"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/budget"
)

// uiBackend is what the operator page (internal/ui) reads: runs with admin
// scope, plugins and their swap history, and the configured admin tokens
// of the current generation (a reload that removes or rotates a token
// ends the sessions opened with it: install calls ui.Revalidate).
type uiBackend struct{ h Host }

var _ ui.Backend = uiBackend{}

var adminScope = runner.Scope{Admin: true}

func (b uiBackend) ListRuns(ctx context.Context, q runner.ListQuery) (runner.Page, error) {
	return b.h.Runs().List(ctx, adminScope, q)
}

func (b uiBackend) Run(ctx context.Context, id string) (any, error) {
	r, err := b.h.Runs().Get(ctx, adminScope, id)
	if err != nil {
		return nil, err
	}
	return adminRun{RunWithIO: api.RunView(r), Drives: r.LeaseToken}, nil
}

// adminRun is a run as the operator page shows it: the native run with its
// input and output, and how many times it was driven (its lease token: 1,
// one more at each takeover; 0 for a run recorded without a lease).
type adminRun struct {
	api.RunWithIO
	Drives int64 `json:"drives,omitempty"`
}

// RunEvents reads the first stored events, a page at a time
// (api.FirstEvents).
func (b uiBackend) RunEvents(ctx context.Context, id string, max int) ([]runner.StoredEvent, error) {
	return api.FirstEvents(ctx, b.h.Runs().History(), id, max)
}

func (b uiBackend) Plugins() any { return b.h.Plugins() }
func (b uiBackend) Swaps() any   { return b.h.SwapHistory() }

// AdminToken compares secret's hash with every admin token's, in constant
// time, as the auth stage does.
func (b uiBackend) AdminToken(secret string) (string, [sha256.Size]byte, bool) {
	if secret == "" {
		return "", [sha256.Size]byte{}, false
	}
	sum := sha256.Sum256([]byte(secret))
	_, cfg := b.h.Current()
	name, found := "", false
	for _, t := range cfg.Tokens {
		h, err := auth.ParseHash(t.Hash)
		if err != nil || !t.Admin {
			continue
		}
		if subtle.ConstantTimeCompare(sum[:], h[:]) == 1 {
			name, found = t.Name, true
		}
	}
	return name, sum, found
}

// AdminTokenValid reports whether the current configuration still has
// an admin token of that name and hash: a session ends with its token,
// and with the hash it was opened under (a rotated token).
func (b uiBackend) AdminTokenValid(name string, hash [sha256.Size]byte) bool {
	_, cfg := b.h.Current()
	for _, t := range cfg.Tokens {
		if t.Name != name || !t.Admin {
			continue
		}
		h, err := auth.ParseHash(t.Hash)
		return err == nil && subtle.ConstantTimeCompare(hash[:], h[:]) == 1
	}
	return false
}

func (b uiBackend) Usage(ctx context.Context, q runner.UsageQuery) (runner.UsagePage, error) {
	return b.h.Runs().Usage(ctx, adminScope, q)
}

// Budgets reads the current configuration's budgets (none without).
func (b uiBackend) Budgets(ctx context.Context) ([]budget.Left, error) {
	set, ok := b.h.Runs().Metering().Quota.(*budget.Set)
	if !ok {
		return nil, nil
	}
	return set.Status(ctx)
}
