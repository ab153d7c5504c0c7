package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/schema"
)

// maxAttempts is the first answer plus one repair. Models that miss a
// schema usually fix it when told what is wrong; one that misses twice is
// unlikely to converge, and each attempt costs the client time and tokens.
const maxAttempts = 2

// structured asks for a JSON answer, buffers it, checks it, and either
// emits it whole or asks once more with the problem spelt out. Usage adds
// up over the attempts: the client's account paid for both.
func (a *Agent) structured(ctx context.Context, o offer, preq runner.ProviderRequest, sch *schema.Schema, emit func(runner.Event) error) (runner.Result, error) {
	var usage runner.Usage
	conversation := preq.Messages
	for attempt := 1; ; attempt++ {
		preq.Attempt = attempt
		res, err := a.buffered(ctx, preq)
		usage = addUsage(usage, res.Usage)
		res.Usage, res.Attempts = usage, attempt
		if err != nil {
			return res, err
		}
		if len(res.ToolCalls) > 0 {
			// Not the final answer yet: the schema applies after the
			// tool results come back.
			if err := checkCalls(o, res); err != nil {
				return res, err
			}
			return res, emitCalls(res.ToolCalls, emit)
		}
		problem := check(sch, preq.JSONObject, res.Text)
		if problem == "" {
			return res, emit(runner.Event{Delta: res.Text})
		}
		if attempt == maxAttempts {
			return res, fmt.Errorf("%w: %s (after a repair attempt)", runner.ErrOutputInvalid, problem)
		}
		preq.Messages = repair(conversation, res.Text, problem, sch != nil)
	}
}

// buffered runs one provider call, collecting its deltas instead of
// passing them on.
func (a *Agent) buffered(ctx context.Context, preq runner.ProviderRequest) (runner.Result, error) {
	var buf strings.Builder
	res, err := a.p.Generate(ctx, preq, func(ev runner.Event) error {
		buf.WriteString(ev.Delta)
		return ctx.Err() // buffering never blocks; stop only when the run is over
	})
	if err == nil && res.Text == "" {
		res.Text = buf.String()
	}
	return res, err
}

// repair is the conversation of the repair attempt: the original one, the
// rejected answer as the assistant's turn, and the problem as the user's.
// The two appended messages are always there (runner.ProviderRequest.Attempt
// promises that shape).
func repair(conversation []runner.Message, rejected, problem string, withSchema bool) []runner.Message {
	ask := "Your previous answer is not a single JSON object (" + problem + "). " +
		"Reply again with only a JSON object and no other text."
	if withSchema {
		ask = "Your previous answer does not match the required JSON Schema: " + problem + ". " +
			"Reply again with only the corrected JSON document, matching the schema exactly, and no other text."
	}
	out := make([]runner.Message, 0, len(conversation)+2)
	out = append(out, conversation...)
	return append(out,
		runner.Message{Role: "assistant", Content: rejected},
		runner.Message{Role: "user", Content: ask})
}

// check validates structured output against the schema, or, for
// json_object, that it is a single JSON object. It returns what is wrong,
// or "".
func check(sch *schema.Schema, jsonObject bool, text string) string {
	if sch != nil {
		if err := sch.Validate([]byte(text)); err != nil {
			return err.Error()
		}
		return ""
	}
	if jsonObject {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
			return "output is not a JSON object"
		}
	}
	return ""
}

func addUsage(a, b runner.Usage) runner.Usage {
	return runner.Usage{InputTokens: a.InputTokens + b.InputTokens, OutputTokens: a.OutputTokens + b.OutputTokens,
		TotalTokens: a.TotalTokens + b.TotalTokens, CachedTokens: a.CachedTokens + b.CachedTokens,
		CacheWriteTokens: a.CacheWriteTokens + b.CacheWriteTokens, ReasoningTokens: a.ReasoningTokens + b.ReasoningTokens}
}
