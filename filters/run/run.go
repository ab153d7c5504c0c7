// Package run is the stage that makes a request a durable run: it creates
// the run (session, thread, actor, tenant, endpoint, request), starts the
// reference agent and hands the run to the next stage. From here on every
// reply carries the run headers, errors included, and whatever the later
// stages do, the run ends recorded: this stage finishes it when they did not.
package run

import (
	"context"
	"errors"

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

	err = next.Handle(ctx, x)
	if x.Detached {
		return err // a background run: its own goroutine finishes it
	}
	// Finish is a no-op when translate already recorded the outcome; it
	// returns the recorded outcome either way.
	outcome := h.Finish(nil, err)
	if err == nil {
		return nil
	}
	var clientGone *filters.ClientGoneError
	if errors.As(err, &clientGone) {
		return err
	}
	if outcome != nil {
		return outcomeError(outcome)
	}
	return err
}

func startSpec(x *filters.Exchange) (runner.StartSpec, error) {
	spec := runner.StartSpec{
		Endpoint: string(x.Endpoint),
		Model:    model.ID,
		TenantID: x.Identity.TenantID,
		Actor:    x.Identity.Actor,
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
	return spec, nil
}
