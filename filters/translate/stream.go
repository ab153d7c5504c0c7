package translate

import (
	"context"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/framing"
	"github.com/runedge/runedge/plugins/abi"
)

// The stream is started lazily, on the first delta or at the end: a run that
// fails before producing anything gets a plain JSON error with its real
// status, which clients handle (and retry) better than an error event.

// chatStream answers a streaming chat completion: a role chunk, one chunk
// per delta, a finish chunk, the usage chunk when asked for, [DONE].
func (t *Translate) chatStream(ctx context.Context, x *filters.Exchange, ids replyIDs) error {
	cs := framing.NewChatStream(ids.completion, ids.created, "service")
	buf := make([]byte, 0, 512)
	started := false
	// Chunks are buffered; the loop flushes when no delta is waiting, a
	// keepalive flushes, and the end goes out with the chunked body's end
	// (Reply.EndStream): the headers, the role chunk and the first delta
	// share one write, and so do the finish chunk, usage and [DONE].
	send := func(b []byte) error {
		if err := x.Reply.Buffer("", b); err != nil {
			return &filters.ClientGoneError{Err: err}
		}
		return nil
	}
	start := func() error {
		started = true
		x.Reply.OpenStream()
		buf = cs.AppendRole(buf[:0])
		return send(buf)
	}
	src := t.source(x, ids.completion, func() error {
		if !started {
			if err := start(); err != nil {
				return err
			}
		}
		return comment(x)
	})
	calls := 0         // tool-call fragments streamed
	unflushed := false // chunks buffered since the last flush
	for {
		p, ok, err := src.next(ctx)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if p.text != "" || p.call != nil {
			if !started {
				if err := start(); err != nil {
					return err
				}
			}
			if c := p.call; c != nil {
				buf = cs.AppendToolCall(buf[:0], c.Index, c.ID, c.Name, c.Arguments)
				calls++
			} else {
				buf = cs.AppendDelta(buf[:0], p.text)
			}
			if err := x.Reply.Buffer("", buf); err != nil {
				return &filters.ClientGoneError{Err: err}
			}
			unflushed = true
		}
		// An empty piece flushes too: the chunks held for it did not come.
		if unflushed && !src.more() {
			unflushed = false
			if err := x.Reply.Flush(); err != nil {
				return &filters.ClientGoneError{Err: err}
			}
		}
	}
	res, err := x.Settle()
	if err != nil {
		return err
	}
	if !started {
		if err := start(); err != nil {
			return err
		}
		if res.Text != "" { // the agent answered without streaming deltas
			if err := send(cs.AppendDelta(buf[:0], res.Text)); err != nil {
				return err
			}
		}
	}
	if calls == 0 { // calls the agent made without streaming them
		for _, c := range wholeCalls(res.ToolCalls) {
			if err := send(cs.AppendToolCall(buf[:0], c.Index, c.ID, c.Name, c.Arguments)); err != nil {
				return err
			}
		}
	}
	if err := send(cs.AppendFinish(buf[:0], res.FinishReason)); err != nil {
		return err
	}
	if x.IncludeUsage {
		if err := send(cs.AppendUsage(buf[:0], res.Usage)); err != nil {
			return err
		}
	}
	if err := send([]byte("[DONE]")); err != nil {
		return err
	}
	if err := x.Reply.EndStream(); err != nil {
		return &filters.ClientGoneError{Err: err}
	}
	return nil
}

// responseStream answers a streaming response with typed events in the
// order response.created → output_item.added → content_part.added →
// output_text.delta… → output_text.done → content_part.done →
// output_item.done → response.completed. Tool calls follow the message (or
// stand alone) as function_call items: output_item.added →
// function_call_arguments.delta… → function_call_arguments.done →
// output_item.done (responses_stream.go).
//
// The events go to out: the client, the run's event log, or both. created
// is the in-progress Response of response.created when the caller has
// mapped it already (a background response, whose reply it also is); nil:
// the stream maps it when it starts.
func (t *Translate) responseStream(ctx context.Context, x *filters.Exchange, ids replyIDs, out *sink, created []byte) error {
	rs := &responseEvents{ctx: ctx, t: t, x: x, ids: ids, rs: framing.NewResponseStream(ids.response, ids.message),
		buf: make([]byte, 0, 1024), out: out, created: created}
	if c := x.Turn.Compacted(); c != nil {
		// The compaction item is output 0 (compacted.go).
		rs.rs = framing.NewResponseStreamAt(ids.response, ids.message, 1)
		rs.outputs, rs.compacted, rs.only = 1, true, c.Seal != nil
	}
	src := t.source(x, ids.response, func() error {
		if err := rs.start(); err != nil {
			return err
		}
		return out.comment()
	})
	unflushed := false // events buffered since the last flush
	for {
		p, ok, err := src.next(ctx)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch {
		case p.call != nil:
			err, unflushed = rs.call(*p.call), true
		case p.text != "":
			err, unflushed = rs.text(p.text), true
		}
		if err != nil {
			return err
		}
		// An empty piece flushes too: the events held for it did not come.
		if unflushed && !src.more() {
			unflushed = false
			if err := out.flush(); err != nil {
				return err
			}
		}
	}
	res, err := x.Run.Wait()
	if err != nil {
		return err
	}
	final, err := t.mapResult(ctx, x, ids, abi.ResultCompleted, &res)
	if err == nil {
		final, err = withCompaction(final, x, ids, &res)
	}
	if err == nil {
		final, err = withSealedReasoning(final, x, ids, &res)
	}
	if err != nil {
		return err
	}
	x.Run.SetObject(final)
	if err := x.End.Finish(&res, nil); err != nil {
		return err
	}
	return rs.finish(res, final)
}

// comment sends the keepalive comment.
func comment(x *filters.Exchange) error {
	if err := x.Reply.Comment("keepalive"); err != nil {
		return &filters.ClientGoneError{Err: err}
	}
	return nil
}
