package translate

import (
	"time"
)

// keepalive receives a run's events for a stream and, while none arrives
// for an interval (the agent thinking before its first token, or silent
// mid-answer), calls beat: the stream then sends an SSE comment, so a load
// balancer's idle timeout does not cut it.
//
// The per-event cost is what matters (a stream is mostly events): an event
// costs a counter increment, never a timer operation. One ticker per
// stream, started at the first wait, ticks every half interval; a tick that
// finds no event since the previous one counts as idle, and two idle ticks
// in a row make a beat. So a beat comes after one to one and a half
// intervals of silence. Re-arming a timer on every wait instead cost about
// 10% of BenchmarkStream1000's CPU per chunk.
type keepalive struct {
	events <-chan runnerEvent
	every  time.Duration // 0: never
	beat   func() error

	ticker *time.Ticker
	seen   uint64 // events received
	mark   uint64 // seen at the last tick
	idle   int    // ticks in a row without an event
}

// recv waits for the next event; ok is false once the events are
// exhausted. A failed beat (the client is gone) ends the wait with its
// error.
func (k *keepalive) recv() (ev runnerEvent, ok bool, err error) {
	select {
	case ev, ok = <-k.events:
		k.seen++
		return ev, ok, nil
	default:
	}
	if k.every <= 0 || k.beat == nil {
		ev, ok = <-k.events
		return ev, ok, nil
	}
	if k.ticker == nil {
		k.ticker = time.NewTicker(k.every / 2)
		k.mark = k.seen
	}
	for {
		select {
		case ev, ok = <-k.events:
			k.seen++
			if !ok {
				k.ticker.Stop()
			}
			return ev, ok, nil
		case <-k.ticker.C:
			if k.seen != k.mark {
				k.mark, k.idle = k.seen, 0
				continue
			}
			if k.idle++; k.idle < 2 {
				continue
			}
			k.idle = 0
			if err := k.beat(); err != nil {
				k.ticker.Stop()
				return runnerEvent{}, false, err
			}
		}
	}
}

// pending reports whether an event is already waiting.
func (k *keepalive) pending() bool { return len(k.events) > 0 }
