package api

import (
	"context"
	"encoding/json"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/runner"
)

// runEvents is where a native run's events go: the client that asked to
// stream (with ids, their sequence numbers), and the run's event log, which
// numbers them the same way (both count from 0, one per event), so a
// replay after Last-Event-ID resumes where the client's stream broke off.
type runEvents struct {
	ctx     context.Context
	x       *filters.Exchange
	log     *runner.EventLog // nil: no history store
	client  bool             // the client asked to stream
	started bool
}

// start sends run.created once, before the first other event.
func (e *runEvents) start() error {
	if e.started {
		return nil
	}
	e.started = true
	if e.client {
		e.x.Reply.OpenStream()
	}
	return e.send(eventRunCreated, RunWithIO{Run: e.x.Run.Run(), Input: e.x.Native.Input})
}

// send records the event and queues it for the client.
func (e *runEvents) send(name string, v any) error {
	if name != eventRunCreated {
		if err := e.start(); err != nil {
			return err
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if e.log != nil {
		e.log.Append(e.ctx, name, b)
	}
	if !e.client {
		return nil
	}
	if err := e.x.Reply.BufferID(e.x.Reply.NextSeq(), name, b); err != nil {
		return &filters.ClientGoneError{Err: err}
	}
	return nil
}

// flush sends what the client's stream has queued.
func (e *runEvents) flush() error {
	if !e.client || !e.started {
		return nil
	}
	if err := e.x.Reply.Flush(); err != nil {
		return &filters.ClientGoneError{Err: err}
	}
	return nil
}

// failed ends the log of a run that failed: readers learn how, as a
// streaming client does (an error event, written by the edge for the
// client), after run.created.
func (e *runEvents) failed(err error) {
	if e.log == nil {
		return
	}
	if !e.started {
		e.started = true
		b, _ := json.Marshal(RunWithIO{Run: e.x.Run.Run(), Input: e.x.Native.Input}) // cannot fail: it marshalled before
		e.log.Append(e.ctx, eventRunCreated, b)
	}
	e.log.Append(e.ctx, "error", apierr.From(err).Body())
	e.close()
}

// close writes what the log holds to the store and ends it.
func (e *runEvents) close() {
	if e.log != nil {
		_ = e.log.Close(context.WithoutCancel(e.ctx)) // a store error is logged by the runner
		e.log = nil
	}
}
