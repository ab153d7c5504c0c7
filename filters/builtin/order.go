// Package builtin assembles the built-in stages into chains. The order of the
// stages lives here, in Order, and nowhere else.
package builtin

import (
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/filters/body"
	"github.com/runedge/runedge/filters/compaction"
	"github.com/runedge/runedge/filters/conversation"
	"github.com/runedge/runedge/filters/mapping"
	"github.com/runedge/runedge/filters/model"
	"github.com/runedge/runedge/filters/nativereq"
	"github.com/runedge/runedge/filters/run"
	"github.com/runedge/runedge/filters/translate"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/internal/mediaurl"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
)

// Order is the order of the stages of the POST chains
// (/v1/chat/completions, /v1/responses).
// body comes right after auth: no body is read for a caller without a
// valid token.
// conversation (Responses only; others pass through) comes before
// map-request: it puts the conversation's items before the input the
// mapping plugin reads. compaction opens the compaction items the mapping
// passed through, before the run is created.
var Order = []string{contract.StageAuth, contract.StageBody, contract.StageModel, contract.StageConversation,
	contract.StageMapRequest, contract.StageCompaction, contract.StageRun, contract.StageTranslate}

// CompactOrder is the order of the stages of POST /v1/responses/compact:
// the Responses mapping, then a compaction run answered by
// compaction.Reply instead of translate.
// compact-input gives a body without input the compaction prompt as its
// input (input is optional there, required of a Responses body).
// It runs before model, whose shape check requires input.
// conversation puts a named conversation's items before the input, as
// on /v1/responses: they are what is compacted.
var CompactOrder = []string{contract.StageAuth, contract.StageBody, contract.StageCompactInput, contract.StageModel,
	contract.StageConversation, contract.StageMapRequest, contract.StageCompaction, contract.StageRun}

// NativeRunOrder is the order of the stages of POST /runner/v1/runs: its
// body is the native run request, so native-request stands for model and
// map-request, and the host's terminal answers in place of translate (the
// run object, or the run's events).
var NativeRunOrder = []string{contract.StageAuth, contract.StageBody, contract.StageNativeRequest, contract.StageRun}

// Plugins are the mapping plugins of one endpoint's chain.
type Plugins struct {
	Request *runtime.Plugin // map-request: exports map_request
	Result  *runtime.Plugin // translate: exports map_result
}

// Deps is what the stages are built from.
type Deps struct {
	Auth *auth.Auth
	// Body reads the request body (limits.max_body_bytes, read_body_timeout).
	Body    *body.Body
	Runner  *runner.Service
	Plugins Plugins
	// StreamWindow batches streamed text for map_stream plugins.
	StreamWindow time.Duration
	// SSEKeepalive is the silence after which a stream sends a comment
	// (0: never).
	SSEKeepalive time.Duration
	// Hosted is what map-request does with withheld hosted tools
	// (tools.hosted).
	Hosted mapping.Hosted
	// Media is the media URL policy of map-request (media.*).
	Media mediaurl.Policy
	// Tracer, when set, makes each stage a span (filters.Traced); nil
	// (tracing off) builds the chain without any wrapper.
	Tracer trace.Tracer
	// Hold keeps the generation the chain is built for alive for a run
	// detached to the background, until the returned func (run.Hold).
	Hold func() (release func())
	// Compaction seals and opens compaction items (compaction.keys).
	Compaction *compaction.Keys
	// InputTokens counts what the agent is given for a request, by the
	// provider's rule: context_management's compact_threshold is held
	// against it (compaction.Auto).
	InputTokens func(runner.Request) int
}

// enclosing are the stages whose span covers the rest of the chain: the
// run lives until the reply is written.
var enclosing = map[string]bool{contract.StageRun: true}

// Chain builds the POST chain of one endpoint in Order.
func Chain(d Deps) (filters.Handler, error) { return build(d, Order, nil) }

// CompactChain builds the chain of POST /v1/responses/compact in
// CompactOrder, ending in compaction.Reply.
func CompactChain(d Deps) (filters.Handler, error) {
	return build(d, CompactOrder, compaction.NewReply(d.Compaction))
}

// NativeRun builds the chain of POST /runner/v1/runs in NativeRunOrder,
// ending in terminal.
func NativeRun(d Deps, terminal filters.Handler) (filters.Handler, error) {
	return build(d, NativeRunOrder, terminal)
}

func build(d Deps, order []string, terminal filters.Handler) (filters.Handler, error) {
	stages := make([]filters.Stage, 0, len(order))
	for _, name := range order {
		var (
			st  filters.Stage
			err error
		)
		switch name {
		case contract.StageAuth:
			st = d.Auth
		case contract.StageBody:
			st = d.Body
		case contract.StageModel:
			st = model.New()
		case contract.StageConversation:
			if _, compact := terminal.(*compaction.Reply); compact {
				st = conversation.NewCompact(d.Runner)
			} else {
				st = conversation.New(d.Runner)
			}
		case contract.StageMapRequest:
			var m *mapping.Mapping
			if m, err = mapping.New(d.Plugins.Request); err == nil {
				st = m.WithHosted(d.Hosted).WithMedia(d.Media)
			}
		case contract.StageCompactInput:
			st = compaction.Input{}
		case contract.StageCompaction:
			if d.Compaction == nil {
				return nil, fmt.Errorf("no compaction keys")
			}
			if terminal != nil {
				st = compaction.NewCompact(d.Compaction)
			} else {
				st = compaction.New(d.Compaction, compaction.Auto{Runner: d.Runner, InputTokens: d.InputTokens, Model: contract.ModelID})
			}
		case contract.StageNativeRequest:
			st = nativereq.New()
		case contract.StageRun:
			st = run.New(d.Runner, run.Hold(d.Hold))
		case contract.StageTranslate:
			st, err = translate.New(d.Plugins.Result, d.StreamWindow, translate.Keepalive(d.SSEKeepalive))
		default:
			err = fmt.Errorf("unknown stage %q", name)
		}
		if err != nil {
			return nil, err
		}
		if d.Tracer != nil {
			st = filters.Traced(d.Tracer, st, enclosing[name])
		}
		stages = append(stages, st)
	}
	return filters.Chain(terminal, stages...), nil
}

// Authenticated builds the chain of the GET and native endpoints: auth, then
// terminal answers.
// Stages in between (the body stage of a route that takes one) run after
// auth.
func Authenticated(a *auth.Auth, terminal filters.Handler, between ...filters.Stage) filters.Handler {
	return filters.Chain(terminal, append([]filters.Stage{a}, between...)...)
}
