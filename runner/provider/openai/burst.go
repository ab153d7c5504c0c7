package openai

import (
	"bufio"
	"bytes"
	"io"

	"github.com/runedge/runedge/runner"
)

// burst marks the events of a stream whose next event has already arrived
// (runner.Event.More), so that the edge writes a burst of chunks to its
// client once instead of once per chunk. An upstream that falls behind its
// model, or a network that batches, delivers many events in one read; the
// consumer cannot see that from its channel alone, because it frames a
// chunk faster than the provider decodes the next and finds the channel
// empty in between.
//
// The promise is never to hold a chunk back from the network: More is set
// only when the rest of the event after this one is in the read buffer
// (dispatching it needs no read), and before any read that may block, a
// provider that sent More since its last read sends an empty event, which
// tells the consumer to write what it holds (the events in between may
// have carried no text: a finish or usage chunk).
type burst struct {
	body  io.Reader
	emit  func(runner.Event) error
	ahead bool // the event after the current one is buffered whole
	owed  bool // an event said More since the last read
}

// split is bufio.ScanLines that notes, at each blank line (an event's
// end), whether the buffer holds another whole event after it.
func (b *burst) split(data []byte, atEOF bool) (int, []byte, error) {
	adv, tok, err := bufio.ScanLines(data, atEOF)
	if tok != nil && len(tok) == 0 {
		rest := data[adv:]
		b.ahead = bytes.Contains(rest, []byte("\n\n")) || bytes.Contains(rest, []byte("\n\r\n"))
	}
	return adv, tok, err
}

// Read is the body's Read, after the empty event a More owes.
func (b *burst) Read(p []byte) (int, error) {
	if b.owed {
		b.owed = false
		if err := b.emit(runner.Event{}); err != nil {
			return 0, err
		}
	}
	return b.body.Read(p)
}

// send emits ev, marked More when the next event is at hand.
func (b *burst) send(ev runner.Event) error {
	ev.More = b.ahead
	b.owed = b.owed || b.ahead
	return b.emit(ev)
}
