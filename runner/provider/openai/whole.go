package openai

import (
	"context"
	"io"

	"github.com/runedge/runedge/runner"
)

// maxWholeBytes bounds a non-streamed answer.
const maxWholeBytes = 32 << 20

// readWhole reads one chat.completion body (size bytes by its
// Content-Length, -1 unknown) and passes its text to emit in one piece,
// then each tool call whole.
func (p *Provider) readWhole(reqCtx context.Context, body io.Reader, size int64, idle *watchdog, emit func(runner.Event) error) (runner.Result, error) {
	b, err := readBody(kickReader{body, idle}, size)
	if err != nil {
		return runner.Result{}, readFailure(reqCtx, err, "the answer broke off")
	}
	if len(b) > maxWholeBytes {
		return runner.Result{}, providerFailure(false, "answered with more than %d bytes", maxWholeBytes)
	}
	var c wireCompletion
	if err := decodeCompletion(b, &c); err != nil {
		return runner.Result{}, providerFailure(false, "answered with a body that is not JSON").saying("%v: %s", err, redact(clip(string(b), 120), p.cfg.APIKey))
	}
	if hasError(c.Error) {
		return runner.Result{}, providerFailure(true, "answered with an error").saying("%s", errorText(c.Error, p.cfg.APIKey))
	}
	var choice *wireChoice
	for i := range c.Choices {
		if c.Choices[i].Index == 0 {
			choice = &c.Choices[i]
			break
		}
	}
	if choice == nil {
		return runner.Result{}, providerFailure(false, "answered without a choice").saying("%s", redact(clip(string(b), 120), p.cfg.APIKey))
	}
	calls := toolCalls(choice.Message.ToolCalls)
	if choice.Message.Content == "" && len(calls) == 0 && choice.Message.Refusal != "" {
		return runner.Result{}, providerFailure(false, "the model refused: %s", clip(choice.Message.Refusal, 300))
	}
	res := runner.Result{Text: choice.Message.Content, FinishReason: finishReason(choice.FinishReason, len(calls)),
		ToolCalls: calls, Usage: c.Usage.usage(), Reasoning: pick(choice.Message.ReasoningContent, choice.Message.Reasoning)}
	if res.Text != "" {
		if err := emit(runner.Event{Delta: res.Text}); err != nil {
			return runner.Result{}, err
		}
	}
	for i, c := range calls {
		d := runner.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		if err := emit(runner.Event{ToolCall: &d}); err != nil {
			return runner.Result{}, err
		}
	}
	return res, nil
}

// readBody reads r to its end, at most maxWholeBytes+1 bytes. A body of
// a known size is read into one buffer of that size (and a byte for the
// read that finds the end): io.ReadAll starts at 512 bytes and grows,
// three allocations and twice the bytes for a small answer.
func readBody(r io.Reader, size int64) ([]byte, error) {
	if size < 0 || size > maxWholeBytes {
		return io.ReadAll(io.LimitReader(r, maxWholeBytes+1))
	}
	b := make([]byte, 0, size+1)
	for {
		if len(b) == cap(b) {
			if len(b) > maxWholeBytes {
				return b, nil // longer than it said: the caller refuses it
			}
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// kickReader keeps the idle timer quiet while bytes arrive.
type kickReader struct {
	r    io.Reader
	idle *watchdog
}

func (k kickReader) Read(b []byte) (int, error) {
	n, err := k.r.Read(b)
	if n > 0 {
		k.idle.kick()
	}
	return n, err
}
