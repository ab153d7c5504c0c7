package filters

import (
	"context"

	"github.com/runedge/runedge/runner"
)

// FollowEvents streams a run's events after sequence number after to the
// client as SSE, from its live event log until the log closes (the run's
// last event is written). withIDs adds SSE ids (the sequence numbers) for
// Last-Event-ID. A client that goes away ends only this reading.
func FollowEvents(ctx context.Context, r *Reply, log *runner.EventLog, after int, withIDs bool) error {
	if !r.Streaming() {
		if err := r.StartStream(); err != nil {
			return &ClientGoneError{Err: err}
		}
	}
	for {
		evs, closed, more := log.Since(after)
		if err := WriteEvents(r, evs, withIDs); err != nil {
			return err
		}
		if len(evs) > 0 {
			after = evs[len(evs)-1].Seq
		}
		if closed {
			return nil
		}
		if more == nil {
			continue
		}
		select {
		case <-more:
		case <-ctx.Done():
			return &ClientGoneError{Err: ctx.Err()}
		}
	}
}

// WriteEvents writes stored events as SSE and flushes once.
func WriteEvents(r *Reply, evs []runner.StoredEvent, withIDs bool) error {
	if len(evs) == 0 {
		return nil
	}
	if !r.Streaming() {
		if err := r.StartStream(); err != nil {
			return &ClientGoneError{Err: err}
		}
	}
	for _, ev := range evs {
		var err error
		if withIDs {
			err = r.BufferID(ev.Seq, ev.Name, ev.Data)
		} else {
			err = r.Buffer(ev.Name, ev.Data)
		}
		if err != nil {
			return &ClientGoneError{Err: err}
		}
	}
	if err := r.Flush(); err != nil {
		return &ClientGoneError{Err: err}
	}
	return nil
}
