package openai

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/runedge/runedge/runner"
)

// maxEventBytes bounds one server-sent event; a longer line is a broken
// upstream, not a reason to grow without limit.
const maxEventBytes = 4 << 20

// readStream reads a chat.completion.chunk event stream, passing each
// content delta and tool-call fragment to emit as soon as its event is complete. It ends at
// "data: [DONE]"; a stream that ends without it and before a finish reason
// was cut off.
func (p *Provider) readStream(reqCtx context.Context, body io.Reader, idle *watchdog, emit func(runner.Event) error) (runner.Result, error) {
	bufs := scanBufs.Get().(*streamBufs)
	defer scanBufs.Put(bufs)
	b := &burst{body: body, emit: emit}
	emit = b.send
	sc := bufio.NewScanner(b)
	sc.Buffer(bufs.scan[:0], maxEventBytes)
	sc.Split(b.split)
	var (
		st    streamState
		event string
		data  = bufs.data[:0]
		have  bool // a data line was seen since the last dispatch
	)
	defer func() {
		if cap(data) <= maxPooledData {
			bufs.data = data[:0]
		}
	}()
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if have {
				err := p.dispatch(&st, event, data, idle, emit)
				if err != nil {
					return runner.Result{}, err
				}
				if st.done {
					drain(body, idle)
					return st.result(), nil
				}
			}
			event, data, have = "", data[:0], false
			continue
		}
		if line[0] == ':' {
			continue // a comment: keep-alives are not a sign of life
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if have {
				data = append(data, '\n')
			}
			data, have = append(data, value...), true
		case "event":
			event = string(value)
		}
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return runner.Result{}, providerFailure(false, "sent a stream event longer than %d bytes", maxEventBytes)
		}
		return runner.Result{}, readFailure(reqCtx, err, "the stream broke mid-answer")
	}
	if reqCtx.Err() != nil { // cancelled between the last read and EOF
		return runner.Result{}, readFailure(reqCtx, reqCtx.Err(), "the stream broke mid-answer")
	}
	if have { // the last event lacked its blank line: take it
		if err := p.dispatch(&st, event, data, idle, emit); err != nil {
			return runner.Result{}, err
		}
	}
	if !st.done && st.finish == "" {
		return runner.Result{}, providerFailure(true, "the stream ended before the answer was complete")
	}
	return st.result(), st.refused()
}

// streamBufs are a stream's read buffers, reused from stream to stream:
// a new 16 KiB scanner buffer per stream was a quarter of the bytes a
// streamed request allocated. scan is what the scanner starts with (it
// allocates a larger one itself for an event that does not fit, which is
// not kept); data holds the event being read.
type streamBufs struct {
	scan [16 << 10]byte
	data []byte
}

// maxPooledData bounds the event buffer a stream gives back: one long event
// must not make every pooled buffer large.
const maxPooledData = 64 << 10

var scanBufs = sync.Pool{New: func() any { return new(streamBufs) }}

// drainGrace is how long the end of the body may take after [DONE].
const drainGrace = time.Second

// drain reads what little follows [DONE] (the end of the chunked body), so
// the connection goes back to the pool instead of being closed. An
// upstream that keeps talking is cut off after drainGrace; the answer is
// complete either way.
func drain(body io.Reader, wd *watchdog) {
	wd.t.Reset(drainGrace)
	io.Copy(io.Discard, io.LimitReader(body, 64<<10))
}

// streamState is what the events have said so far.
type streamState struct {
	text      strings.Builder
	reasoning strings.Builder
	refusal   strings.Builder
	finish    string
	usage     *wireUsage
	done      bool
	calls     callBuilder
	// chunk is the event being decoded, reused so that a chunk's choices
	// are read into the same slice every time.
	chunk wireChunk
}

func (st *streamState) result() runner.Result {
	return runner.Result{Text: st.text.String(), FinishReason: finishReason(st.finish, len(st.calls.calls)),
		ToolCalls: st.calls.calls, Usage: st.usage.usage(), Reasoning: st.reasoning.String()}
}

// refused is the model's refusal (structured output mode), which is not an
// answer to pass on.
func (st *streamState) refused() error {
	if st.text.Len() == 0 && len(st.calls.calls) == 0 && st.refusal.Len() > 0 {
		return providerFailure(false, "the model refused: %s", clip(st.refusal.String(), 300))
	}
	return nil
}

// dispatch handles one complete event.
func (p *Provider) dispatch(st *streamState, event string, data []byte, idle *watchdog, emit func(runner.Event) error) error {
	idle.kick()
	if string(data) == "[DONE]" {
		st.done = true
		return st.refused()
	}
	c := &st.chunk
	if err := decodeChunk(data, c); err != nil {
		return providerFailure(false, "sent a malformed stream event").saying("%v: %s", err, redact(clip(string(data), 120), p.cfg.APIKey))
	}
	if event == "error" || hasError(c.Error) {
		raw := c.Error
		if !hasError(raw) {
			raw = data
		}
		return providerFailure(true, "reported an error mid-stream").saying("%s", errorText(raw, p.cfg.APIKey))
	}
	if c.Usage != nil {
		st.usage = c.Usage
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.FinishReason != "" && ch.FinishReason != st.finish {
			st.finish = strings.Clone(ch.FinishReason) // c aliases data
		}
		st.refusal.WriteString(ch.Delta.Refusal)
		st.reasoning.WriteString(pick(ch.Delta.ReasoningContent, ch.Delta.Reasoning))
		if n := len(ch.Delta.Content); n > 0 {
			// The delta is the end of the answer so far: the builder
			// only appends, so that string never changes, and the delta
			// costs no copy of its own (c aliases data, which the next
			// event overwrites).
			st.text.WriteString(ch.Delta.Content)
			text := st.text.String()
			if err := emit(runner.Event{Delta: text[len(text)-n:]}); err != nil {
				return err
			}
		}
		for _, tc := range ch.Delta.ToolCalls {
			d := st.calls.add(tc)
			if err := emit(runner.Event{ToolCall: &d}); err != nil {
				return err
			}
		}
	}
	return nil
}
