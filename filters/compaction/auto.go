package compaction

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// Auto is what a Responses turn needs to compact on its own
// (context_management, Codex's compaction_trigger): the runner that runs
// the compaction, and the count of what the agent would be given.
type Auto struct {
	Runner *runner.Service
	// InputTokens counts what the agent is given for req by the
	// provider's rule (POST /v1/responses/input_tokens counts the same).
	InputTokens func(req runner.Request) int
	// Model is recorded on the compaction run.
	Model string
}

// A turn compacts in one of two ways, both with the summary path of POST
// /v1/responses/compact (runner.CompactionPrompt, the item sealed for the
// tenant):
//
//   - a compaction_trigger (the final input item) makes the turn itself
//     the compaction: the agent is given everything before the trigger
//     and the prompt, with no tools or schema, and the Response's output
//     is the compaction item alone (filters/translate seals the answer).
//   - context_management compacts when what the agent would be given
//     (instructions, conversation items, the turns of
//     previous_response_id, the input) counts more than compact_threshold
//     tokens: a compaction run (endpoint responses.compact, in the turn's
//     session) summarises all of it, the Response's output starts with its
//     item, and the turn's agent is given the summary and the input from
//     its last user message on (that question, and the calls and results
//     after it), instead of the whole.
//
// The request is recorded as sent either way; only the agent's input
// changes (x.Context).

// compactTurn arranges x's compaction; trigger is the index of the
// compaction_trigger the input ended in (-1: none), limit is
// context_management's threshold (0: none).
// What cannot be resolved (an unknown previous response, an item
// reference) is left to the run stage, which refuses it in its words.
func (s *Stage) compactTurn(ctx context.Context, x *filters.Exchange, trigger, limit int) error {
	a := s.auto
	if a.Runner == nil || a.InputTokens == nil {
		return unsupported("context_management", "context_management and compaction_trigger are not supported by this chain")
	}
	if trigger >= 0 && x.Conversation != nil {
		// The turn would append the trigger, and the summary in clear,
		// to the conversation.
		return unsupported(fmt.Sprintf("input[%d]", trigger),
			"a compaction_trigger cannot end a conversation turn: compact the conversation with POST /v1/responses/compact")
	}
	resolved, err := a.Runner.Input(ctx, x.Identity.TenantID, x.Native)
	if err != nil {
		return nil
	}
	var all []runner.Message
	if c := x.Conversation; c != nil {
		all = append(all, c.Messages...)
	}
	all = append(all, resolved...)
	prompt := runner.Message{Role: "user", Content: runner.CompactionPrompt}
	if trigger >= 0 {
		x.Context = append(all, prompt)
		n := &x.Native
		n.Tools, n.ToolChoice, n.ParallelToolCalls, n.MaxToolCalls = nil, runner.ToolChoice{}, nil, 0
		n.OutputSchema, n.SchemaName, n.JSONObject = nil, "", false
		tenant := x.Identity.TenantID
		x.Compacted = &filters.Compacted{Seal: func(summary string) string { return s.keys.Seal(tenant, summary) }}
		return nil
	}
	req := x.Native
	req.Input = all
	last := lastUser(all)
	if a.InputTokens(req) <= limit || last < 0 {
		return nil
	}
	summary, runID, err := s.compactRun(ctx, x, append(all[:len(all):len(all)], prompt))
	if err != nil || runID == "" {
		return err
	}
	item, err := json.Marshal(item{ID: contract.CompactionID(runID), Type: "compaction",
		EncryptedContent: s.keys.Seal(x.Identity.TenantID, summary)})
	if err != nil {
		return err
	}
	x.Context = append([]runner.Message{{Role: "system", Content: runner.CompactedContextPrefix + summary}}, all[last:]...)
	x.Compacted = &filters.Compacted{Item: item}
	return nil
}

// compactRun runs the compaction of a turn, whose agent is given input,
// and returns the summary and the run's id. It runs in the turn's session
// (its conversation's, the one its headers name, or its previous
// response's) and is recorded as endpoint responses.compact; the turn's
// max_output_tokens bounds its answer, not the summary. A run that
// cannot start for a reason the run stage words better returns no id and
// no error: the turn goes on uncompacted, and is refused there.
func (s *Stage) compactRun(ctx context.Context, x *filters.Exchange, input []runner.Message) (string, string, error) {
	spec := runner.StartSpec{Endpoint: contract.EndpointCompact, Model: s.auto.Model, TenantID: x.Identity.TenantID,
		Actor: x.Identity.Actor, Token: x.Identity.Token, Context: input,
		Request: runner.Request{Input: x.Native.Input, Instructions: x.Native.Instructions,
			PreviousResponseID: x.Native.PreviousResponseID, NoStore: x.Native.NoStore, Upstream: x.Native.Upstream}}
	if c := x.Conversation; c != nil {
		spec.SessionID = c.SessionID
	} else {
		hd := x.Request.Header
		var err error
		if spec.SessionID, err = filters.HeaderValue(hd, filters.HeaderSessionID, 128, filters.IDChar); err != nil {
			return "", "", nil
		}
		if spec.ThreadID, err = filters.HeaderValue(hd, filters.HeaderThreadID, 128, filters.IDChar); err != nil {
			return "", "", nil
		}
	}
	fresh := spec.SessionID == "" && spec.ThreadID == "" && spec.Request.PreviousResponseID == ""
	spec.SessionNamed = spec.SessionID != ""
	h, err := s.auto.Runner.Start(ctx, spec)
	if err != nil {
		if e := apierr.FromRunner(err); e != nil {
			return "", "", e
		}
		return "", "", nil
	}
	if fresh {
		// The compaction opened the turn's session: the turn continues
		// its thread, as the run stage continues a body-named one.
		x.SessionID, x.ThreadID = h.Run().SessionID, h.Run().ThreadID
	}
	for range h.Events() {
	}
	res, err := h.Wait()
	var outcome error
	if err != nil {
		outcome = h.Finish(nil, err)
	} else {
		outcome = h.Finish(&res, nil)
	}
	if outcome != nil {
		return "", "", apierr.From(outcome)
	}
	return res.Text, h.Run().ID, nil
}

// lastUser is the index of the last user message of in, -1 without one.
func lastUser(in []runner.Message) int {
	for i := len(in) - 1; i >= 0; i-- {
		if in[i].Role == "user" {
			return i
		}
	}
	return -1
}
