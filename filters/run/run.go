// Package run is the stage that makes a request a durable run: it creates
// the run (session, thread, actor, tenant, endpoint, request), starts the
// reference agent and hands the run to the next stage. From here on every
// reply carries the run headers, errors included, and whatever the later
// stages do, the run ends recorded.
//
// This stage owns the run's end: it alone calls runner.Handle.Finish, and
// it alone maps the outcome to the client's error (errors.go). It hands the
// end to the later stages as a filters.End (Exchange.End): one that must
// record the end before its reply's last byte (translate) calls End.Finish,
// one that moves the run to a background goroutine calls End.Detach, and
// this stage finishes what nobody did (End.Close).
package run

import (
	"context"
	"errors"
	"time"

	"github.com/tidwall/sjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/turn"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

const maxIDHeaderLen = 128

// Run is the run stage.
type Run struct {
	svc  *runner.Service
	hold func() (release func())
}

var _ filters.Stage = (*Run)(nil)

// Option configures the stage.
type Option func(*Run)

// Hold gives the stage what keeps its chain's configuration generation
// (chains and plugins) alive past a reply: a run detached to a background
// goroutine holds it until it ends (filters.End.Detach). The hold belongs
// to the generation the chain is built for, not to a request, so it is
// given here once; without it nothing is held.
func Hold(hold func() (release func())) Option { return func(s *Run) { s.hold = hold } }

// New builds the stage on the run service.
func New(svc *runner.Service, opts ...Option) *Run {
	s := &Run{svc: svc}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Name implements filters.Stage.
func (*Run) Name() string { return contract.StageRun }

// modelIDValue is the x-service-model-id header's value, the same on
// every reply (the only model), allocated once. net/http never writes
// into a header's values, and Set and Add replace or grow the slice.
var modelIDValue = []string{contract.ModelID}

// Handle implements filters.Stage.
func (s *Run) Handle(ctx context.Context, x *filters.Exchange, next filters.Handler) error {
	spec, err := startSpec(x)
	if err != nil {
		return err
	}
	// The body is mapped: from here the run holds the native request, and
	// an agent-sized body (230 KB) does not wait out the run beside it.
	x.DropBody()
	if x.Endpoint != filters.Native {
		// The run has its request (spec): the native request's texts,
		// which point into the mapping's output, need not live while the
		// run's start commits, once its agent has prepared its upstream
		// request (runner.PreparingAgent), nor while the model answers
		// (runner.Sent gives the body's bytes in flight back then). Its
		// tools stay: a Responses stream names a tool call as the client
		// offered it. A native run keeps its input, which its run.created
		// event echoes.
		x.Native = runner.Request{Tools: x.Native.Tools}
	}
	h, err := s.svc.Start(ctx, spec)
	if err != nil {
		if c := conversationOf(x); c != nil && errors.Is(err, runner.ErrNotFound) {
			// The conversation was deleted since the conversation stage
			// found it: its session has no run to continue.
			e := apierr.NotFound("no conversation with id %q", c.ID)
			e.Param, e.Err = "conversation", err
			return e
		}
		return startError(x.Endpoint, err)
	}
	r := h.Record()
	// The run's three ids share one backing array: Header.Set would
	// allocate a slice per header. Each value is its own full slice, so
	// an Add to one cannot write into the next.
	ids := []string{r.SessionID, r.ID, r.ThreadID}
	hd := x.Reply.Header()
	hd[filters.HeaderSessionID] = ids[0:1:1]
	hd[filters.HeaderRunID] = ids[1:2:2]
	hd[filters.HeaderThreadID] = ids[2:3:3]
	hd[filters.HeaderModelID] = modelIDValue
	if q := h.Quota(); q.Limit > 0 {
		apierr.RateLimitTokens{Limit: q.Limit, Remaining: q.Remaining, Reset: time.Until(q.Reset)}.Header(hd)
	}
	x.Run = h
	// run_timeout, shutdown and a native cancel hold even while a write
	// to a client that stopped reading blocks: the write is cut short.
	defer h.OnInterrupt(x.Reply.Abort)()

	t := x.Turn
	e := filters.NewEnd(func(res *runner.Result, err error) error { return end(ctx, h, t, res, err) }, s.hold)
	x.End = e
	return e.Close(next.Handle(ctx, x))
}

// end records the run's outcome (runner.Handle.Finish) and maps it to the
// client's error (outcomeError). filters.End calls it, once. A completed
// Responses turn (t) commits its after-effects before the reply's last
// byte (turn.Turn.Commit: the conversation, the socket's memory), from
// the Response the client got (the object translate set on the run,
// after the result plugin); a store that fails there fails the reply
// (503), though the run itself is recorded completed.
func end(ctx context.Context, h *runner.Handle, t *turn.Turn, res *runner.Result, err error) error {
	outcome := h.Finish(res, err)
	if outcome == nil {
		if t == nil { // no after-effects: no copy of the run for them
			return nil
		}
		return t.Commit(context.WithoutCancel(ctx), h.Run(), h.Object())
	}
	var clientGone *filters.ClientGoneError
	if errors.As(err, &clientGone) {
		return err // nobody left to render for; the edge only logs it
	}
	return outcomeError(outcome)
}

func startSpec(x *filters.Exchange) (runner.StartSpec, error) {
	spec := runner.StartSpec{
		Endpoint: string(x.Endpoint),
		Model:    contract.ModelID,
		TenantID: x.Identity.TenantID,
		Actor:    x.Identity.Actor,
		Token:    x.Identity.Token,
		Request:  x.Native,
		Echo:     x.Echo,
	}
	// The ids land in ids, not through pointers into spec: a table of
	// spec's fields' addresses moved the whole StartSpec (about 550
	// bytes) to the heap on every request.
	var ids [4]string // session, thread, request, correlation
	hd := x.Request.Header
	for i, f := range [...]struct {
		name string
		ok   func(rune) bool
	}{
		{filters.HeaderSessionID, filters.IDChar},
		{filters.HeaderThreadID, filters.IDChar},
		{filters.HeaderRequestID, filters.Printable},
		{filters.HeaderCorrelationID, filters.Printable},
	} {
		v, err := filters.HeaderValue(hd, f.name, maxIDHeaderLen, f.ok)
		if err != nil {
			return spec, err
		}
		ids[i] = v
	}
	// A body that names the session or thread (the native run request)
	// says it once: a header naming another is a contradiction, not a
	// choice to make for the client.
	for i, f := range [...]struct {
		body, param string
		header      string
	}{
		{x.SessionID, "session_id", filters.HeaderSessionID},
		{x.ThreadID, "thread_id", filters.HeaderThreadID},
	} {
		switch {
		case f.body == "":
		case ids[i] != "" && ids[i] != f.body:
			return spec, apierr.InvalidBody(f.param, "%s names %q but the %s header names %q", f.param, f.body, f.header, ids[i])
		default:
			ids[i] = f.body
		}
	}
	spec.SessionID, spec.ThreadID, spec.RequestID, spec.CorrelationID = ids[0], ids[1], ids[2], ids[3]
	spec.SessionNamed = spec.SessionID != ""
	// The turn gives the run its history, or the context assembled
	// already, and a conversation's session (turn.Turn.Spec).
	x.Turn.Spec(&spec)
	if c := conversationOf(x); c != nil {
		// The Response echoes conversation {"id"} (the result mapping
		// reads it from the echo).
		echo, err := sjson.SetBytes(x.Echo, contract.EchoConversation, map[string]string{"id": c.ID})
		if err != nil {
			return spec, err
		}
		spec.Echo = echo
		x.Echo = echo
	}
	return spec, nil
}

// conversationOf is the conversation x's turn continues, nil for none.
func conversationOf(x *filters.Exchange) *turn.Conversation {
	if x.Turn == nil {
		return nil
	}
	return x.Turn.Conversation
}
