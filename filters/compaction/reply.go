package compaction

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// Reply is the terminal handler of the compact chain: it waits for the
// compaction run, seals the agent's summary and answers the
// response.compaction object.
type Reply struct{ keys *Keys }

// NewReply returns the terminal handler that seals with keys.
func NewReply(keys *Keys) *Reply { return &Reply{keys: keys} }

var _ filters.Handler = (*Reply)(nil)

// Handle answers x once its run has ended, and records the outcome.
func (r *Reply) Handle(ctx context.Context, x *filters.Exchange) error {
	for range x.Run.Events() {
	}
	res, err := x.Run.Wait()
	if err != nil {
		return x.End.Finish(nil, err)
	}
	body, err := json.Marshal(object(x.Run.Run(), x.Run.Input(), r.keys.Seal(x.Identity.TenantID, res.Text), res.Usage))
	if err != nil {
		return x.End.Finish(nil, err)
	}
	if err := x.End.Finish(&res, nil); err != nil {
		return err
	}
	if err := x.Reply.JSON(http.StatusOK, body); err != nil {
		return &filters.ClientGoneError{Err: err}
	}
	return nil
}

// The response.compaction object (OpenAI's CompactResource): the user
// messages the agent was given, then one compaction item.
type compacted struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	CreatedAt int64  `json:"created_at"`
	Output    []any  `json:"output"`
	Usage     usage  `json:"usage"`
}

type userMessage struct {
	ID      string     `json:"id"`
	Type    string     `json:"type"`
	Status  string     `json:"status"`
	Role    string     `json:"role"`
	Content []textPart `json:"content"`
}

type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type item struct {
	ID               string `json:"id"`
	Type             string `json:"type"`
	EncryptedContent string `json:"encrypted_content"`
}

type usage struct {
	InputTokens         int            `json:"input_tokens"`
	InputTokensDetails  map[string]int `json:"input_tokens_details"`
	OutputTokens        int            `json:"output_tokens"`
	OutputTokensDetails map[string]int `json:"output_tokens_details"`
	TotalTokens         int            `json:"total_tokens"`
}

// object builds the reply of run: ids from the run id's random part
// (resp_, cmp_; the user messages msg_<part>_<n>), so the native API's run
// and the reply name each other.
func object(run runner.Run, input []runner.Message, sealed string, u runner.Usage) compacted {
	out := make([]any, 0, len(input))
	for _, m := range input {
		if m.Role != "user" || runner.IsCompactionPrompt(m) {
			continue
		}
		out = append(out, userMessage{
			ID: contract.InputMessageID(run.ID, len(out)), Type: "message", Status: "completed", Role: "user",
			Content: []textPart{{Type: "input_text", Text: m.Content}},
		})
	}
	out = append(out, item{ID: contract.CompactionID(run.ID), Type: "compaction", EncryptedContent: sealed})
	return compacted{
		ID: contract.ResponseID(run.ID), Object: "response.compaction", CreatedAt: run.CreatedAt, Output: out,
		Usage: usage{
			InputTokens: u.InputTokens, InputTokensDetails: map[string]int{"cached_tokens": u.CachedTokens, "cache_write_tokens": u.CacheWriteTokens},
			OutputTokens: u.OutputTokens, OutputTokensDetails: map[string]int{"reasoning_tokens": u.ReasoningTokens},
			TotalTokens: u.TotalTokens,
		},
	}
}
