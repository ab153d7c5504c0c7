// Package run is the stage that makes a request a durable run: it creates
// the run (session, thread, actor, tenant, endpoint, request), starts the
// reference agent and hands the run to the next stage. From here on every
// reply carries the run headers, errors included, and whatever the later
// stages do, the run ends recorded.
//
// This stage owns the run's end: it alone calls runner.Handle.Finish, and
// it alone maps the outcome to the client's error (errors.go). A later
// stage that must record the end before its reply's last byte (translate)
// calls the function this stage puts on the exchange (filters.Exchange.Finish).
package run

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/tidwall/sjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/model"
	"github.com/runedge/runedge/runner"
)

const maxIDHeaderLen = 128

// Run is the run stage.
type Run struct {
	svc *runner.Service
}

var _ filters.Stage = (*Run)(nil)

// New builds the stage on the run service.
func New(svc *runner.Service) *Run { return &Run{svc: svc} }

// Name implements filters.Stage.
func (*Run) Name() string { return "run" }

// Handle implements filters.Stage.
func (s *Run) Handle(ctx context.Context, x *filters.Exchange, next filters.Handler) error {
	spec, err := startSpec(x)
	if err != nil {
		return err
	}
	h, err := s.svc.Start(ctx, spec)
	if err != nil {
		return startError(x.Endpoint, err)
	}
	r := h.Run()
	hd := x.Reply.Header()
	hd.Set(filters.HeaderSessionID, r.SessionID)
	hd.Set(filters.HeaderRunID, r.ID)
	hd.Set(filters.HeaderThreadID, r.ThreadID)
	hd.Set(filters.HeaderModelID, model.ID)
	x.Run = h
	// run_timeout, shutdown and a native cancel hold even while a write
	// to a client that stopped reading blocks: the write is cut short.
	defer h.OnInterrupt(x.Reply.Abort)()

	f := &finisher{h: h, ctx: ctx, conv: x.Conversation}
	x.Finish = f.finish
	err = next.Handle(ctx, x)
	if x.Detached {
		return err // a background run: its goroutine calls x.Finish
	}
	if f.done.Load() {
		// A later stage recorded the end before its last byte; err is
		// what it met after (the client gone) or Finish's own answer.
		return err
	}
	return f.finish(nil, err)
}

// finisher is the one owner of a run's end in the HTTP path: it records the
// outcome (runner.Handle.Finish, once) and maps it to the client's error
// (outcomeError), for the run stage and, through filters.Exchange.Finish,
// for the stages after it.
type finisher struct {
	h    *runner.Handle
	ctx  context.Context
	conv *filters.Conversation // the conversation the run continues, or nil
	once sync.Once
	done atomic.Bool // read by the run stage after the chain returns
	err  error       // what the first call returned; later calls repeat it
}

func (f *finisher) finish(res *runner.Result, err error) error {
	f.once.Do(func() {
		f.err = f.end(res, err)
		f.done.Store(true)
	})
	return f.err
}

func (f *finisher) end(res *runner.Result, err error) error {
	outcome := f.h.Finish(res, err)
	if outcome == nil {
		if f.conv != nil {
			// The turn joins the conversation before the reply's last
			// byte; a store that fails here fails the reply (503), though
			// the run itself is recorded completed.
			return f.conv.Append(context.WithoutCancel(f.ctx), f.h.Run().ID, res)
		}
		return nil
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
		Model:    model.ID,
		TenantID: x.Identity.TenantID,
		Actor:    x.Identity.Actor,
		Token:    x.Identity.Token,
		Request:  x.Native,
		Echo:     x.Echo,
	}
	hd := x.Request.Header
	for _, f := range []struct {
		dst  *string
		name string
		ok   func(rune) bool
	}{
		{&spec.SessionID, filters.HeaderSessionID, filters.IDChar},
		{&spec.ThreadID, filters.HeaderThreadID, filters.IDChar},
		{&spec.RequestID, filters.HeaderRequestID, filters.Printable},
		{&spec.CorrelationID, filters.HeaderCorrelationID, filters.Printable},
	} {
		v, err := filters.HeaderValue(hd, f.name, maxIDHeaderLen, f.ok)
		if err != nil {
			return spec, err
		}
		*f.dst = v
	}
	spec.SessionNamed = spec.SessionID != ""
	if c := x.Conversation; c != nil {
		// The run continues the conversation's session; the Response
		// echoes conversation {"id"} (the result mapping reads it from
		// the echo).
		spec.SessionID, spec.SessionNamed, spec.History = c.SessionID, true, c.Messages
		echo, err := sjson.SetBytes(x.Echo, "conversation", map[string]string{"id": c.ID})
		if err != nil {
			return spec, err
		}
		spec.Echo = echo
		x.Echo = echo
	}
	return spec, nil
}
