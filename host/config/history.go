package config

import "fmt"

// History bounds what one Responses request may make runedge read, hold
// and store from the response history (limits.history). Each field, at 0,
// takes its default (runner.HistoryBounds and DefaultMaxReplaysPerTenant);
// all take effect at start.
type History struct {
	// MaxReferences bounds the item_reference items of one request, and
	// the distinct stored items one request may read (default 256).
	MaxReferences int `yaml:"max_references"`
	// MaxReferenceBytes bounds the messages a request's item references
	// resolve to, every occurrence counted (default 4 MiB).
	MaxReferenceBytes int `yaml:"max_reference_bytes"`
	// MaxHistoryBytes bounds the earlier turns previous_response_id
	// replays, references in them included, and the items of a
	// conversation a turn continues (default 8 MiB).
	MaxHistoryBytes int `yaml:"max_history_bytes"`
	// MaxStoredEvents bounds the stream events kept of one background
	// response: past it, deltas are dropped (default 20,000).
	MaxStoredEvents int `yaml:"max_stored_events"`
	// MaxReplaysPerTenant bounds one tenant's concurrent stream readers
	// (GET /v1/responses/{id}?stream=true and /runner/v1/runs/{id}/events);
	// beyond it, 429 (default 4).
	MaxReplaysPerTenant int `yaml:"max_replays_per_tenant"`
}

// DefaultMaxReplaysPerTenant is limits.history.max_replays_per_tenant's
// default.
const DefaultMaxReplaysPerTenant = 4

func (h *History) applyDefaults() {
	if h.MaxReplaysPerTenant == 0 {
		h.MaxReplaysPerTenant = DefaultMaxReplaysPerTenant
	}
}

// validate reports a negative bound, naming its field.
func (h History) validate(bad func(field, format string, args ...any)) {
	for _, f := range []struct {
		name string
		v    int
	}{{"max_references", h.MaxReferences}, {"max_reference_bytes", h.MaxReferenceBytes},
		{"max_history_bytes", h.MaxHistoryBytes}, {"max_stored_events", h.MaxStoredEvents},
		{"max_replays_per_tenant", h.MaxReplaysPerTenant}} {
		if f.v < 0 {
			bad(fmt.Sprintf("limits.history.%s", f.name), "must not be negative")
		}
	}
}
