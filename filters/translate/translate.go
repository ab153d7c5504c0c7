// Package translate is the last stage: it turns the run's native result into
// the compatible reply. The whole reply body (chat.completion, response) comes
// from the result mapping plugin; stream framing that never changes — SSE
// lines, chunk envelopes, event envelopes — is built by the host
// (filters/framing) so that a long stream costs no WebAssembly call per token.
//
// The run's terminal state is recorded before the reply's last byte: after
// mapping the result and before writing it, the stage calls x.End.Finish,
// the end the run stage handed it (the run stage owns the end and the
// mapping of outcomes to client errors; this stage never calls
// runner.Handle.Finish itself). A background response detaches the end
// (x.End.Detach) to a goroutine of its own.
package translate

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
)

// Translate is the translate stage.
type Translate struct {
	plugin filters.Mapper
	// window batches streamed text for map_stream (see mapped).
	window time.Duration
	// keepalive is how long a stream may stay silent before it sends an
	// SSE comment (0: never).
	keepalive time.Duration
}

// Option configures the stage.
type Option func(*Translate)

// Keepalive makes a stream that has had nothing to send for d write a
// ": keepalive" comment (after the headers: a stream still waiting for its
// first token starts then), so load balancers with an idle timeout keep
// it. 0 disables.
func Keepalive(d time.Duration) Option { return func(t *Translate) { t.keepalive = d } }

// runnerEvent is the run's stream event.
type runnerEvent = runner.Event

var _ filters.Stage = (*Translate)(nil)

// New builds the stage around a loaded plugin (a *runtime.Plugin) that
// exports map_result. window batches streamed text for a plugin that
// exports map_stream.
func New(p filters.Mapper, window time.Duration, opts ...Option) (*Translate, error) {
	if !p.Has(runtime.MapResult) {
		return nil, fmt.Errorf("translate: plugin %s does not export map_result", p.Name())
	}
	t := &Translate{plugin: p, window: window}
	for _, o := range opts {
		o(t)
	}
	return t, nil
}

// Name implements filters.Stage.
func (*Translate) Name() string { return contract.StageTranslate }

// Handle implements filters.Stage.
func (t *Translate) Handle(ctx context.Context, x *filters.Exchange, next filters.Handler) error {
	if x.Run == nil {
		return fmt.Errorf("translate: no run on the exchange (the run stage must come first)")
	}
	ids := newReplyIDs(x.Run.Record())
	var err error
	switch {
	case x.Run.Background():
		err = t.background(ctx, x, ids)
	case !x.Stream:
		err = t.whole(ctx, x, ids)
	case x.Endpoint == filters.ChatCompletions:
		err = t.chatStream(ctx, x, ids)
	default:
		err = t.recordedStream(ctx, x, ids)
	}
	if err != nil {
		return err
	}
	return next.Handle(ctx, x)
}

// whole answers a non-streaming request with one body.
func (t *Translate) whole(ctx context.Context, x *filters.Exchange, ids replyIDs) error {
	body, err := t.complete(ctx, x, ids)
	if err != nil {
		return err
	}
	if err := x.Reply.JSON(http.StatusOK, body); err != nil {
		return &filters.ClientGoneError{Err: err}
	}
	return nil
}

// complete waits for the agent, maps its result and records the outcome
// (with the mapped object, for a stored response). A failure before the
// record is returned as is: the caller passes it on to x.End.Finish.
func (t *Translate) complete(ctx context.Context, x *filters.Exchange, ids replyIDs) ([]byte, error) {
	for range x.Run.Events() { // drained only if the runner sent any
	}
	res, err := x.Run.Wait()
	if err != nil {
		return nil, err
	}
	body, err := t.mapResult(ctx, x, ids, abi.ResultCompleted, &res)
	if err == nil {
		body, err = withCompaction(body, x, ids, &res)
	}
	if err == nil {
		body, err = withSealedReasoning(body, x, ids, &res)
	}
	if err != nil {
		return nil, err
	}
	x.Run.SetObject(body)
	if err := x.End.Finish(&res, nil); err != nil {
		return nil, err
	}
	return body, nil
}

// mapResult calls the plugin's map_result and normalises what comes back
// (abi.NormalizeResult): one JSON object, compacted, since the reply may be
// framed in an SSE data line, which ends at the first newline. status is
// abi.ResultCompleted, or abi.ResultInProgress (res nil) for the response
// carried by response.created.
func (t *Translate) mapResult(ctx context.Context, x *filters.Exchange, ids replyIDs, status string, res *runner.Result) ([]byte, error) {
	in := resultInput(x, ids, status, res)
	return mapResultWith(ctx, t.plugin, &in)
}

// mapResultWith calls p's map_result on in and normalises what comes
// back; a fault or an output the codec refuses is 500 plugin_error naming
// p.
func mapResultWith(ctx context.Context, p filters.Mapper, in *abi.ResultInput) ([]byte, error) {
	out, err := p.MapResult(ctx, in)
	if err != nil {
		return nil, filters.PluginError(err)
	}
	normalize := abi.NormalizeResult
	if j, ok := p.(jsonResults); ok && j.ResultIsJSON() {
		normalize = abi.CompactResult
	}
	body, err := normalize(out)
	if err != nil {
		return nil, filters.PluginOutputError(p.Name(), runtime.MapResult, err)
	}
	return body, nil
}

// jsonResults is a Mapper whose map_result output is one JSON object by
// construction (runtime.Plugin.ResultIsJSON: the built-in default run
// natively), compacted but not validated again.
type jsonResults interface{ ResultIsJSON() bool }

// replyIDs are the compatible ids of one reply. They share the run id's
// random part, so any reply id leads back to its run.
type replyIDs struct {
	completion, response, message string
	created                       int64
	ended                         int64 // the run's end, 0 while it runs
	session, run                  string
}

func newReplyIDs(r *runner.Run) replyIDs {
	created := r.CreatedAt
	if created == 0 {
		created = time.Now().Unix()
	}
	ids := replyIDs{completion: contract.CompletionID(r.ID), response: contract.ResponseID(r.ID),
		message: contract.MessageID(r.ID), created: created, session: r.SessionID, run: r.ID}
	if r.EndedAt != nil {
		ids.ended = *r.EndedAt
	}
	return ids
}

// resultInput is the map_result input. res is nil for the in-progress
// response of response.created.
func resultInput(x *filters.Exchange, ids replyIDs, status string, res *runner.Result) abi.ResultInput {
	in := abi.ResultInput{Endpoint: string(x.Endpoint), ID: ids.response, MessageID: ids.message,
		Created: ids.created, SessionID: ids.session, RunID: ids.run, Model: contract.ModelID, Status: status, Echo: x.Echo}
	if x.Endpoint == filters.ChatCompletions {
		in.ID = ids.completion
	}
	if res != nil {
		in.Result = *res
	}
	if status == abi.ResultCompleted {
		// A Response's completed_at: when the run ended, or now, as the
		// final object is built the moment the answer is complete.
		in.Completed = ids.ended
		if in.Completed == 0 {
			in.Completed = time.Now().Unix()
		}
	}
	return in
}
