// Package api holds the terminal handlers of runedge's own HTTP APIs over
// the run service: the model list, the native run API (list, get, cancel,
// events, start), the stored responses of the Responses API (get, delete,
// input items, cancel, input token counts, stream resumption) and the
// Conversations API. Each is a filters.Handler at the end of a chain that
// host/server builds (auth, body, …); a handler reads the request the
// stages left on the Exchange and writes the reply.
//
// It is a package of its own so that what each endpoint answers can be
// read, and tested, without the server around it: a handler gets what it
// needs in Handlers, which the composition root (host/server) builds for
// each configuration generation, and never the server itself.
package api

import (
	"github.com/runedge/runedge/internal/mediaurl"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
)

// Handlers are the handlers of one generation and what they read.
type Handlers struct {
	// Runs is the run service: runs, the response history
	// (Runs.History()) and conversations (Runs.Conversations()).
	Runs *runner.Service
	// Replays counts each tenant's stream readers. It belongs to the
	// server and outlives generations: a reload must not reset the count.
	Replays *Replays
	// MaxReplaysPerTenant is limits.history.max_replays_per_tenant (0: no
	// bound).
	MaxReplaysPerTenant int
	// ProviderKind is provider.kind: input tokens are counted by its rule.
	ProviderKind string
	// Media is the media URL policy (media.*): input_tokens refuses what
	// /v1/responses refuses.
	Media mediaurl.Policy
	// Result is the generation's Responses result mapping plugin: it
	// rebuilds a stored response that has no final object.
	Result *runtime.Plugin
}
