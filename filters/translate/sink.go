package translate

import (
	"context"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/runner"
)

// sink is where a responses stream's events go: the client, the run's
// event log (a stored response, so a client that lost its stream can
// resume it), or both. A background run's stream goes to the log only; the
// client, if any, follows the log.
type sink struct {
	ctx   context.Context
	reply *filters.Reply   // nil: no client on this stream
	log   *runner.EventLog // nil: not recorded
	seq   int
}

func newSink(ctx context.Context, reply *filters.Reply, log *runner.EventLog) *sink {
	return &sink{ctx: ctx, reply: reply, log: log}
}

// nextSeq numbers the events; the reply's counter when there is a client,
// so an error event the edge adds continues the sequence.
func (s *sink) nextSeq() int {
	if s.reply != nil {
		return s.reply.NextSeq()
	}
	n := s.seq
	s.seq++
	return n
}

// startStream opens the client's stream; its headers go out with the
// first flush (filters.Reply.OpenStream).
func (s *sink) startStream() error {
	if s.reply != nil {
		s.reply.OpenStream()
	}
	return nil
}

// buffer records the event and writes it without flushing.
func (s *sink) buffer(name string, data []byte) error {
	if s.log != nil {
		s.log.Append(s.ctx, name, data)
	}
	if s.reply == nil {
		return nil
	}
	if err := s.reply.Buffer(name, data); err != nil {
		return &filters.ClientGoneError{Err: err}
	}
	return nil
}

func (s *sink) flush() error {
	if s.reply == nil {
		return nil
	}
	if err := s.reply.Flush(); err != nil {
		return &filters.ClientGoneError{Err: err}
	}
	return nil
}

// end sends what the client's stream has buffered, its last events
// (filters.Reply.EndStream).
func (s *sink) end() error {
	if s.reply == nil {
		return nil
	}
	if err := s.reply.EndStream(); err != nil {
		return &filters.ClientGoneError{Err: err}
	}
	return nil
}

// comment sends a keepalive comment to the client; the log has no use for
// one.
func (s *sink) comment() error {
	if s.reply == nil {
		return nil
	}
	if err := s.reply.Comment("keepalive"); err != nil {
		return &filters.ClientGoneError{Err: err}
	}
	return nil
}
