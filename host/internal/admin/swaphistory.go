package admin

import (
	"context"
	"sync"
	"time"
)

// CLIUserAgent is the User-Agent of the runedge CLI's admin API calls; a
// swap it makes is recorded as the CLI's.
const CLIUserAgent = "runedge-cli"

// maxSwapRecords bounds the swap history: the newest are kept.
const maxSwapRecords = 100

// SwapRecord is one reload or plugin swap, as the operator page shows it:
// when, what triggered it, which stages changed plugin, and whether it
// took.
type SwapRecord struct {
	Time    int64        `json:"time"` // Unix milliseconds
	Trigger string       `json:"trigger"`
	What    string       `json:"what"` // the stage swapped, "reload" or "xds"
	OK      bool         `json:"ok"`
	Error   string       `json:"error,omitempty"`
	Changes []SwapChange `json:"changes"`
}

// SwapChange is one stage whose plugin changed: Old is nil for a stage
// that had none.
type SwapChange struct {
	Stage string     `json:"stage"`
	Old   *PluginRef `json:"old"`
	New   *PluginRef `json:"new"`
}

// PluginRef names a plugin build.
type PluginRef struct {
	Plugin  string `json:"plugin"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

// SwapHistory is a ring of the latest swaps (the zero value is ready).
// It lives on the server, not in a generation, so it outlives every
// configuration it records.
type SwapHistory struct {
	mu   sync.Mutex
	recs []SwapRecord // oldest first
}

// Add records r, dropping the oldest record when the ring is full.
func (h *SwapHistory) Add(r SwapRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.recs) == maxSwapRecords {
		copy(h.recs, h.recs[1:])
		h.recs = h.recs[:maxSwapRecords-1]
	}
	h.recs = append(h.recs, r)
}

// List returns the records, newest first.
func (h *SwapHistory) List() []SwapRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]SwapRecord, len(h.recs))
	for i, r := range h.recs {
		out[len(out)-1-i] = r
	}
	return out
}

type swapTriggerKey struct{}

// WithTrigger says who or what asked for a swap (the admin API and the
// CLI pass the token's name); without it, the kind of swap names it.
func WithTrigger(ctx context.Context, trigger string) context.Context {
	return context.WithValue(ctx, swapTriggerKey{}, trigger)
}

func swapTrigger(ctx context.Context, what string) string {
	if t, ok := ctx.Value(swapTriggerKey{}).(string); ok {
		return t
	}
	switch what {
	case "reload":
		return "configuration file reload"
	case "xds":
		return "xDS control plane"
	}
	return "API call"
}

// NewSwapRecord records a swap of what: it compares the plugins before
// and after (nil after: the swap failed, err says why).
func NewSwapRecord(ctx context.Context, what string, before, after []PluginInfo, err error) SwapRecord {
	r := SwapRecord{Time: time.Now().UnixMilli(), Trigger: swapTrigger(ctx, what), What: what, OK: err == nil, Changes: []SwapChange{}}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	old := map[string]PluginInfo{}
	for _, p := range before {
		old[p.Stage] = p
	}
	for _, p := range after {
		o, had := old[p.Stage]
		if had && o.SHA256 == p.SHA256 {
			continue
		}
		c := SwapChange{Stage: p.Stage, New: &PluginRef{Plugin: p.Plugin, Version: p.Version, SHA256: p.SHA256}}
		if had {
			c.Old = &PluginRef{Plugin: o.Plugin, Version: o.Version, SHA256: o.SHA256}
		}
		r.Changes = append(r.Changes, c)
	}
	return r
}
