package translate

import (
	"context"
	"time"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
)

// piece is one thing to stream: text, or a tool-call fragment.
type piece struct {
	text string
	call *runner.ToolCallDelta
}

// textSource yields what to stream, piece by piece; ok is false once the
// run's events are exhausted.
type textSource interface {
	next(ctx context.Context) (p piece, ok bool, err error)
	// more reports whether another piece is already waiting, or follows
	// at once (runner.Event.More), so the caller can hold its flush.
	more() bool
}

// source picks how streamed text reaches the client: straight from the run,
// or through the plugin's map_stream hook when it exports one. beat sends a
// keepalive while the run is silent (see keepalive).
func (t *Translate) source(x *filters.Exchange, replyID string, beat func() error) textSource {
	k := &keepalive{events: x.Run.Events(), every: t.keepalive, beat: beat}
	if !t.plugin.Has(runtime.MapStream) {
		return &direct{k: k}
	}
	return &mapped{t: t, x: x, replyID: replyID, events: x.Run.Events(), wait: k}
}

// direct passes deltas through: no plugin call per token.
type direct struct {
	k *keepalive
	// ahead is the last event's More: the provider holds the next one
	// already, though it may not be in the channel yet.
	ahead bool
}

func (d *direct) next(context.Context) (piece, bool, error) {
	ev, ok, err := d.k.recv()
	d.ahead = ev.More
	return piece{text: ev.Delta, call: ev.ToolCall}, ok, err
}

func (d *direct) more() bool { return d.ahead || d.k.pending() }

// mapped batches deltas and maps each batch with one map_stream call: it
// waits for a delta, then keeps collecting for up to the stream window, so a
// fast stream costs one call per window rather than one per token. The
// plugin is stateless: the text it holds back (say, half an e-mail address)
// comes back in hold and is prepended to the next batch.
//
// Tool-call fragments are not text: they end the batch they arrive in and
// pass through unmapped, after it. Text still held back then goes out
// with the stream's final batch.
type mapped struct {
	t       *Translate
	x       *filters.Exchange
	replyID string
	events  <-chan runnerEvent
	wait    *keepalive // the first delta of a batch is waited for here
	hold    string
	done    bool
	buf     []byte
	pending *runner.ToolCallDelta // a fragment that ended the last batch
}

// more is false: a batch already took what was waiting.
func (m *mapped) more() bool { return false }

func (m *mapped) next(ctx context.Context) (piece, bool, error) {
	if c := m.pending; c != nil {
		m.pending = nil
		return piece{call: c}, true, nil
	}
	if m.done {
		return piece{}, false, nil
	}
	text := m.hold
	ev, ok, err := m.wait.recv()
	if err != nil {
		return piece{}, false, err
	}
	switch {
	case ok && ev.ToolCall != nil && text == "":
		return piece{call: ev.ToolCall}, true, nil
	case ok && ev.ToolCall != nil:
		m.pending = ev.ToolCall
	case ok:
		text += ev.Delta
		text, ok = m.collect(text)
	}
	final := !ok
	emit, hold, err := m.call(ctx, text, final)
	if err != nil {
		return piece{}, false, err
	}
	m.hold = hold
	if final {
		m.done = true
		return piece{text: emit + hold}, true, nil
	}
	return piece{text: emit}, true, nil
}

// collect appends the deltas that arrive within the window.
func (m *mapped) collect(text string) (string, bool) {
	if m.t.window <= 0 {
		for {
			select {
			case ev, ok := <-m.events:
				if !ok {
					return text, false
				}
				if ev.ToolCall != nil {
					m.pending = ev.ToolCall
					return text, true
				}
				text += ev.Delta
			default:
				return text, true
			}
		}
	}
	timer := time.NewTimer(m.t.window)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-m.events:
			if !ok {
				return text, false
			}
			if ev.ToolCall != nil {
				m.pending = ev.ToolCall
				return text, true
			}
			text += ev.Delta
		case <-timer.C:
			return text, true
		}
	}
}

func (m *mapped) call(ctx context.Context, text string, final bool) (emit, hold string, err error) {
	in := abi.StreamInput{Endpoint: string(m.x.Endpoint), ID: m.replyID, TenantID: m.x.Identity.TenantID,
		Text: text, Final: final}
	m.buf = in.AppendJSON(m.buf[:0])
	out, err := m.t.plugin.Call(ctx, runtime.MapStream, m.buf)
	if err != nil {
		return "", "", filters.PluginError(err)
	}
	o, err := abi.DecodeStreamOutput(out)
	if err != nil {
		return "", "", filters.PluginOutputError(m.t.plugin.Name(), runtime.MapStream, err)
	}
	return o.Emit, o.Hold, nil
}
