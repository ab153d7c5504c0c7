package translate

import (
	"context"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/framing"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/internal/respjson"
	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/runner"
)

// responseEvents frames one streamed response: the message (output 0)
// while text arrives, then a function_call item per tool call. Items follow
// one another: a call's first fragment closes what was open before it.
//
// The final Response (from the plugin) lists the message first, then the
// calls; a model that writes text after it began calling would break that
// order, so such text is not streamed and reaches the client in
// response.completed only.
type responseEvents struct {
	ctx context.Context
	t   *Translate
	x   *filters.Exchange
	ids replyIDs
	rs  *framing.ResponseStream
	buf []byte
	out *sink // the client, the run's event log, or both
	// created is response.created's in-progress Response, once mapped.
	created []byte

	started  bool
	msg      int // 0: no message yet, 1: open, 2: closed
	streamed strings.Builder
	outputs  int // output items opened
	calls    []callItem
	// compacted: the Response's output starts with a compaction item
	// (compacted.go); only: it is the output's only item, the turn being
	// the compaction, and the agent's text (the summary) is not streamed.
	compacted, only bool
}

// callItem is a call item being streamed: a function_call, or a
// custom_tool_call when the native tool says the client offered a custom
// tool (its input is sent whole when the arguments are complete).
type callItem struct {
	item   respjson.CallItem
	output int
	args   strings.Builder
	open   bool
}

// send and buffer queue an event without flushing: the stream loop
// flushes when no more is waiting, a keepalive flushes, and finish ends the
// stream (sink.end), so events that come together share one write.
func (e *responseEvents) send(name string, b []byte) error { return e.out.buffer(name, b) }

func (e *responseEvents) buffer(name string, b []byte) error { return e.out.buffer(name, b) }

// start sends response.created with the in-progress response. It comes
// from the plugin too, so that response.created and response.completed have
// the same shape.
func (e *responseEvents) start() error {
	if e.started {
		return nil
	}
	e.started = true
	if e.created == nil {
		created, err := e.t.mapResult(e.ctx, e.x, e.ids, abi.ResultInProgress, nil)
		if err != nil {
			return err
		}
		e.created = created
	}
	if err := e.out.startStream(); err != nil {
		return err
	}
	if err := e.send("response.created", e.rs.AppendCreated(e.buf[:0], e.out.nextSeq(), e.created)); err != nil {
		return err
	}
	if e.compacted && !e.only {
		return e.compactionEvents(e.x.Turn.Compacted().Item)
	}
	return nil
}

// openMessage opens the output message, output 0.
func (e *responseEvents) openMessage() error {
	e.msg, e.outputs = 1, e.outputs+1
	if err := e.send("response.output_item.added", e.rs.AppendItemAdded(e.buf[:0], e.out.nextSeq())); err != nil {
		return err
	}
	return e.send("response.content_part.added", e.rs.AppendPartAdded(e.buf[:0], e.out.nextSeq()))
}

// closeMessage sends the message's done events with its whole text.
func (e *responseEvents) closeMessage(text string) error {
	e.msg = 2
	if err := e.send("response.output_text.done", e.rs.AppendTextDone(e.buf[:0], e.out.nextSeq(), text)); err != nil {
		return err
	}
	if err := e.send("response.content_part.done", e.rs.AppendPartDone(e.buf[:0], e.out.nextSeq(), text)); err != nil {
		return err
	}
	return e.send("response.output_item.done", e.rs.AppendItemDone(e.buf[:0], e.out.nextSeq(), text))
}

func (e *responseEvents) text(s string) error {
	if err := e.start(); err != nil {
		return err
	}
	if len(e.calls) > 0 || e.msg == 2 || e.only {
		return nil // see the type's comment
	}
	if e.msg == 0 {
		if err := e.openMessage(); err != nil {
			return err
		}
	}
	e.streamed.WriteString(s)
	return e.buffer("response.output_text.delta", e.rs.AppendTextDelta(e.buf[:0], e.out.nextSeq(), s))
}

func (e *responseEvents) call(d runner.ToolCallDelta) error {
	if err := e.start(); err != nil {
		return err
	}
	if e.msg == 1 {
		if err := e.closeMessage(e.streamed.String()); err != nil {
			return err
		}
	}
	if d.Index >= len(e.calls) {
		if err := e.closeCalls(); err != nil {
			return err
		}
		for len(e.calls) <= d.Index {
			e.calls = append(e.calls, callItem{})
		}
		c := &e.calls[d.Index]
		c.item = respjson.CallItem{ItemID: contract.CallID(e.ids.message, d.Index), CallID: d.ID, Name: d.Name}
		c.item.Namespace, c.item.Name, c.item.Custom = e.toolKind(d.Name)
		c.output, c.open = e.outputs, true
		e.outputs++
		if err := e.send("response.output_item.added",
			e.rs.AppendCallAdded(e.buf[:0], e.out.nextSeq(), c.output, c.item)); err != nil {
			return err
		}
	}
	c := &e.calls[d.Index]
	if d.Arguments == "" || !c.open {
		return nil
	}
	c.args.WriteString(d.Arguments)
	if c.item.Custom {
		return nil // sent whole by closeCalls
	}
	return e.buffer("response.function_call_arguments.delta",
		e.rs.AppendArgumentsDelta(e.buf[:0], e.out.nextSeq(), c.output, c.item.ItemID, d.Arguments))
}

// closeCalls sends the done events of the calls still open.
func (e *responseEvents) closeCalls() error {
	for i := range e.calls {
		c := &e.calls[i]
		if !c.open {
			continue
		}
		c.open = false
		c.item.Arguments = c.args.String()
		if err := e.closeArguments(c); err != nil {
			return err
		}
		if err := e.send("response.output_item.done",
			e.rs.AppendCallDone(e.buf[:0], e.out.nextSeq(), c.output, c.item)); err != nil {
			return err
		}
	}
	return nil
}

// closeArguments sends the event that ends a call's arguments: for a
// custom call, its whole input (a delta, then done).
func (e *responseEvents) closeArguments(c *callItem) error {
	if !c.item.Custom {
		return e.send("response.function_call_arguments.done",
			e.rs.AppendArgumentsDone(e.buf[:0], e.out.nextSeq(), c.output, c.item.ItemID, c.item.Name, c.item.Arguments))
	}
	input := respjson.CustomInput(c.item.Arguments)
	if err := e.send("response.custom_tool_call_input.delta",
		e.rs.AppendCustomInput(e.buf[:0], e.out.nextSeq(), c.output, c.item.ItemID, input, false)); err != nil {
		return err
	}
	return e.send("response.custom_tool_call_input.done",
		e.rs.AppendCustomInput(e.buf[:0], e.out.nextSeq(), c.output, c.item.ItemID, input, true))
}

// toolKind reports how the client offered the tool name (the native
// request's tools): its namespace, its name as the client gave it, and
// whether it is a custom tool.
func (e *responseEvents) toolKind(name string) (string, string, bool) {
	for _, t := range e.x.Native.Tools {
		if t.Name == name {
			return t.Namespace, t.FunctionName(), t.Custom
		}
	}
	return "", name, false
}

// finish closes what is open and sends the terminal event with final, the
// Response from the plugin. What the agent produced without streaming it
// (a whole answer, calls) is sent here first.
func (e *responseEvents) finish(res runner.Result, final []byte) error {
	if err := e.start(); err != nil {
		return err
	}
	if e.only {
		if err := e.compactionEvents([]byte(gjson.GetBytes(final, "output.0").Raw)); err != nil {
			return err
		}
		return e.complete(final)
	}
	if len(e.calls) == 0 {
		if e.msg == 0 && (res.Text != "" || len(res.ToolCalls) == 0) {
			if err := e.openMessage(); err != nil {
				return err
			}
			if res.Text != "" {
				if err := e.send("response.output_text.delta", e.rs.AppendTextDelta(e.buf[:0], e.out.nextSeq(), res.Text)); err != nil {
					return err
				}
			}
		}
		if e.msg == 1 {
			// The done events repeat the text as the plugin mapped it.
			text := res.Text
			path := "output.0.content.0.text"
			if e.compacted {
				path = "output.1.content.0.text"
			}
			if v := gjson.GetBytes(final, path); v.Type == gjson.String {
				text = v.Str
			}
			if err := e.closeMessage(text); err != nil {
				return err
			}
		}
		for _, d := range wholeCalls(res.ToolCalls) {
			if err := e.call(d); err != nil {
				return err
			}
		}
	}
	if err := e.closeCalls(); err != nil {
		return err
	}
	if err := e.reasoning(res.Reasoning, final); err != nil {
		return err
	}
	return e.complete(final)
}

// complete sends the terminal event with final and ends the stream.
func (e *responseEvents) complete(final []byte) error {
	completed := e.rs.AppendCompleted(e.buf[:0], e.out.nextSeq(), final)
	if err := e.send(gjson.GetBytes(completed, "type").Str, completed); err != nil {
		return err
	}
	return e.out.end()
}

// reasoning sends the events of the reasoning item of an answer whose
// upstream gave its reasoning: after the answer's items, where the final
// Response lists it (plugins/compat), with the summary in one delta. Its
// output_item.done carries the encrypted_content final's item has (include
// reasoning.encrypted_content), the same as response.completed's.
func (e *responseEvents) reasoning(text string, final []byte) error {
	if text == "" {
		return nil
	}
	id, i := contract.ReasoningID(e.ids.message), e.outputs
	var sealed string
	if e.x.Turn.ReasoningSealer() != nil {
		sealed = gjson.GetBytes(final, `output.#(id=="`+id+`").encrypted_content`).Str
	}
	e.outputs++
	events := []struct {
		name string
		add  func(dst []byte, seq int) []byte
	}{
		{"response.output_item.added", func(d []byte, n int) []byte { return e.rs.AppendReasoningItemEvent(d, n, i, id, "", "", false) }},
		{"response.reasoning_summary_part.added", func(d []byte, n int) []byte { return e.rs.AppendSummaryPart(d, n, i, id, "", false) }},
		{"response.reasoning_summary_text.delta", func(d []byte, n int) []byte { return e.rs.AppendSummaryText(d, n, i, id, text, false) }},
		{"response.reasoning_summary_text.done", func(d []byte, n int) []byte { return e.rs.AppendSummaryText(d, n, i, id, text, true) }},
		{"response.reasoning_summary_part.done", func(d []byte, n int) []byte { return e.rs.AppendSummaryPart(d, n, i, id, text, true) }},
		{"response.output_item.done", func(d []byte, n int) []byte { return e.rs.AppendReasoningItemEvent(d, n, i, id, text, sealed, true) }},
	}
	for _, ev := range events {
		if err := e.send(ev.name, ev.add(e.buf[:0], e.out.nextSeq())); err != nil {
			return err
		}
	}
	return nil
}
