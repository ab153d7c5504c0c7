package translate

import (
	"context"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/plugins/compat"
)

// The stream is started lazily, on the first delta or at the end: a run that
// fails before producing anything gets a plain JSON error with its real
// status, which clients handle (and retry) better than an error event.

// chatStream answers a streaming chat completion: a role chunk, one chunk
// per delta, a finish chunk, the usage chunk when asked for, [DONE].
func (t *Translate) chatStream(ctx context.Context, x *filters.Exchange, ids replyIDs) error {
	cs := compat.NewChatStream(ids.completion, ids.created, "service")
	buf := make([]byte, 0, 512)
	started := false
	send := func(b []byte) error {
		if err := x.Reply.Event("", b); err != nil {
			return &filters.ClientGoneError{Err: err}
		}
		return nil
	}
	start := func() error {
		started = true
		if err := x.Reply.StartStream(); err != nil {
			return &filters.ClientGoneError{Err: err}
		}
		buf = cs.AppendRole(buf[:0])
		return send(buf)
	}
	src := t.source(x, ids.completion)
	for {
		text, ok, err := src.next(ctx)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if text == "" {
			continue
		}
		if !started {
			if err := start(); err != nil {
				return err
			}
		}
		buf = cs.AppendDelta(buf[:0], text)
		if err := x.Reply.Buffer("", buf); err != nil {
			return &filters.ClientGoneError{Err: err}
		}
		if !src.more() {
			if err := x.Reply.Flush(); err != nil {
				return &filters.ClientGoneError{Err: err}
			}
		}
	}
	res, err := x.Run.Wait()
	if err != nil {
		return err
	}
	if err := x.Run.Finish(&res, nil); err != nil {
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
	if err := send(cs.AppendFinish(buf[:0], res.FinishReason)); err != nil {
		return err
	}
	if x.IncludeUsage {
		u := compat.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens,
			TotalTokens: res.Usage.TotalTokens}
		if err := send(cs.AppendUsage(buf[:0], u)); err != nil {
			return err
		}
	}
	return send([]byte("[DONE]"))
}

// responseStream answers a streaming response with typed events in the
// order response.created → output_item.added → content_part.added →
// output_text.delta… → output_text.done → content_part.done →
// output_item.done → response.completed.
//
// The events go to out: the client, the run's event log, or both.
func (t *Translate) responseStream(ctx context.Context, x *filters.Exchange, ids replyIDs, out *sink) error {
	rs := compat.NewResponseStream(ids.response, ids.message)
	buf := make([]byte, 0, 1024)
	started := false
	send := out.event
	start := func() error {
		started = true
		// The in-progress response is mapped natively: the plugin shapes
		// the final object, in response.completed.
		created, err := compat.MapResult(resultEnvelope(nil, x, ids, "in_progress", nil))
		if err != nil {
			return err
		}
		if err := out.startStream(); err != nil {
			return err
		}
		if err := send("response.created", rs.AppendCreated(buf[:0], out.nextSeq(), created)); err != nil {
			return err
		}
		if err := send("response.output_item.added", rs.AppendItemAdded(buf[:0], out.nextSeq())); err != nil {
			return err
		}
		return send("response.content_part.added", rs.AppendPartAdded(buf[:0], out.nextSeq()))
	}
	src := t.source(x, ids.response)
	for {
		text, ok, err := src.next(ctx)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if text == "" {
			continue
		}
		if !started {
			if err := start(); err != nil {
				return err
			}
		}
		if err := out.buffer("response.output_text.delta", rs.AppendTextDelta(buf[:0], out.nextSeq(), text)); err != nil {
			return err
		}
		if !src.more() {
			if err := out.flush(); err != nil {
				return err
			}
		}
	}
	res, err := x.Run.Wait()
	if err != nil {
		return err
	}
	final, err := t.mapResult(ctx, x, ids, &res)
	if err != nil {
		return err
	}
	x.Run.SetObject(final)
	if err := x.Run.Finish(&res, nil); err != nil {
		return err
	}
	if !started {
		if err := start(); err != nil {
			return err
		}
		if res.Text != "" {
			if err := send("response.output_text.delta", rs.AppendTextDelta(buf[:0], out.nextSeq(), res.Text)); err != nil {
				return err
			}
		}
	}
	// The done events repeat the text as the plugin mapped it.
	text := res.Text
	if v := gjson.GetBytes(final, "output.0.content.0.text"); v.Type == gjson.String {
		text = v.Str
	}
	if err := send("response.output_text.done", rs.AppendTextDone(buf[:0], out.nextSeq(), text)); err != nil {
		return err
	}
	if err := send("response.content_part.done", rs.AppendPartDone(buf[:0], out.nextSeq(), text)); err != nil {
		return err
	}
	if err := send("response.output_item.done", rs.AppendItemDone(buf[:0], out.nextSeq(), text)); err != nil {
		return err
	}
	completed := rs.AppendCompleted(buf[:0], out.nextSeq(), final)
	return send(gjson.GetBytes(completed, "type").Str, completed)
}

func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }
