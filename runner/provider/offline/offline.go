// Package offline is a deterministic provider that needs no network and no
// model: it echoes the last user message. It lets runedge run end to end in
// tests, demos and CI, and lets client authors exercise every outcome
// (failure, mid-stream failure, waiting, invalid structured output) on
// demand with directives; see README.md.
package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/schema"
)

// Config tunes the provider.
type Config struct {
	// TokenDelay is slept between tokens, to make streaming visible and to
	// give cancellation something to cancel.
	TokenDelay time.Duration
}

// Provider is the offline provider. It is safe for concurrent use.
type Provider struct {
	cfg Config
}

var _ runner.Provider = (*Provider)(nil)

// New returns an offline provider.
func New(cfg Config) *Provider { return &Provider{cfg: cfg} }

// Name is "offline".
func (p *Provider) Name() string { return "offline" }

// InProcess implements runner.InProcessProvider: the answer is computed
// here, and a token delay ends with the context.
func (p *Provider) InProcess() bool { return true }

// Generate answers "You said: <last user message>", word by word, or a
// document for structured output. See the package README for directives.
func (p *Provider) Generate(ctx context.Context, req runner.ProviderRequest, emit func(runner.Event) error) (runner.Result, error) {
	msgs := asked(req)
	said := lastUserText(msgs)
	d := directiveOf(said)
	switch d {
	case directiveFail:
		return runner.Result{}, errSimulated
	case directiveWait:
		return runner.Result{}, errApproval
	}
	if tools := toolsToCall(req, msgs, said); len(tools) > 0 {
		return p.call(ctx, req, msgs, said, tools, emit)
	}
	tokens, err := answer(req, msgs, said, d)
	if err != nil {
		return runner.Result{}, err
	}
	res := runner.Result{FinishReason: "stop"}
	if req.MaxOutputTokens > 0 && len(tokens) > req.MaxOutputTokens {
		tokens = tokens[:req.MaxOutputTokens]
		res.FinishReason = "length"
	}
	if d == directiveFailMid {
		tokens = tokens[:min(len(tokens), 3)]
	}
	var text strings.Builder
	// A run stopped part-way still reports what it consumed.
	partial := func() runner.Result {
		u := res.Usage
		u.InputTokens = countWords(req.Messages)
		u.TotalTokens = u.InputTokens + u.OutputTokens
		return runner.Result{Usage: u}
	}
	for i, tok := range tokens {
		if i > 0 {
			if err := sleep(ctx, p.cfg.TokenDelay); err != nil {
				return partial(), err
			}
		}
		if err := ctx.Err(); err != nil {
			return partial(), err
		}
		if err := emit(runner.Event{Delta: tok}); err != nil {
			return runner.Result{}, err
		}
		text.WriteString(tok)
		res.Usage.OutputTokens++
	}
	if d == directiveFailMid {
		return runner.Result{}, errSimulated
	}
	res.Text = text.String()
	res.Usage.InputTokens = countWords(req.Messages)
	res.Usage.TotalTokens = res.Usage.InputTokens + res.Usage.OutputTokens
	return res, nil
}

// answer returns the tokens to stream: words of the echo, or ~16-byte
// pieces of a JSON document for structured output.
func answer(req runner.ProviderRequest, msgs []runner.Message, said string, d directive) ([]string, error) {
	echo := strings.TrimSpace("You said: " + said)
	if s := earlierSummary(msgs); s != "" {
		echo += " (earlier: " + s + ")"
	}
	if sum, ok := compactionAnswer(msgs); ok {
		echo, said = sum, sum
	}
	if endsInToolResults(msgs) {
		echo = quoteResults(msgs)
		said = echo
	}
	switch {
	case len(req.OutputSchema) > 0:
		var doc []byte
		var err error
		if d.violates(req.Attempt) {
			doc, err = violating(req.OutputSchema)
		} else {
			doc, err = schema.Generate(req.OutputSchema, said)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: offline provider: %v", runner.ErrProvider, err)
		}
		return pieces(string(doc), 16), nil
	case req.JSONObject:
		doc, _ := json.Marshal(map[string]string{"answer": echo}) // a string map always marshals
		return pieces(string(doc), 16), nil
	}
	return words(echo), nil
}

// call answers with calls of tools instead of text.
func (p *Provider) call(ctx context.Context, req runner.ProviderRequest, msgs []runner.Message, said string, tools []runner.Tool, emit func(runner.Event) error) (runner.Result, error) {
	cs, err := calls(msgs, said, tools)
	if err != nil {
		return runner.Result{}, err
	}
	n, err := p.emitCalls(ctx, cs, emit)
	if err != nil {
		return runner.Result{}, err
	}
	res := runner.Result{FinishReason: "tool_calls", ToolCalls: cs}
	res.Usage.InputTokens = countWords(req.Messages)
	res.Usage.OutputTokens = n
	res.Usage.TotalTokens = res.Usage.InputTokens + res.Usage.OutputTokens
	return res, nil
}

// violating returns a document the schema refuses: the first of a few
// candidates of the wrong shape that fails validation, or text that is not
// JSON at all when the schema accepts everything.
func violating(raw json.RawMessage) ([]byte, error) {
	s, err := schema.Compile(raw)
	if err != nil {
		return nil, err
	}
	for _, c := range []string{`{}`, `[]`, `"invalid"`, `0`, `null`} {
		if s.Validate([]byte(c)) != nil {
			return []byte(c), nil
		}
	}
	return []byte(`invalid output`), nil
}

// sleep waits d or until ctx ends, whichever is first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
