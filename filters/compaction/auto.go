package compaction

import (
	"context"
	"errors"
	"fmt"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/internal/respjson"
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
//     session) summarises what precedes the last user message, the
//     Response's output starts with its item, and the turn's agent is
//     given the summary and the input from its last user message on (that
//     question, and the calls and results after it), instead of the whole.
//     Nothing precedes it (the threshold is crossed by the turn alone):
//     nothing is compacted. The Response's usage is the turn's and the
//     compaction run's together (filters/translate); each run records its
//     own.
//
// The request is recorded as sent either way; only the agent's input
// changes (x.Context). The history the stage resolved is the run's
// (x.Context), whether it compacted or not: a turn reads it once.

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
	// The history is resolved once, in an admission slot of the turn's
	// token and tenant, counted in it, and handed to the run (x.Context),
	// which does not read it again.
	resolved, release, err := a.Runner.Input(ctx, x.Identity.TenantID, x.Identity.Token, x.Native)
	if err != nil {
		release()
		return nil
	}
	var all []runner.Message
	if c := x.Conversation; c != nil {
		hist, err := c.Messages(ctx)
		if err != nil {
			release()
			var be *runner.BoundError
			if errors.As(err, &be) {
				e := apierr.InvalidBody(be.Param, "%s", be.Msg)
				e.Err = err
				return e
			}
			return err
		}
		all = append(all, hist...)
	}
	all = append(all, resolved...)
	prompt := runner.Message{Role: "user", Content: runner.CompactionPrompt}
	if trigger >= 0 {
		release()
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
	over := a.InputTokens(req) > limit
	release()
	x.Context = all
	// Only what precedes the last user message is compacted: that
	// message (and the calls and results after it) is the turn's own and
	// goes upstream as it is. With nothing before it, the threshold is
	// crossed by the turn alone, and a summary would only add to it.
	last := lastUser(all)
	if !over || last <= 0 {
		return nil
	}
	summary, runID, usage, err := s.compactRun(ctx, x, append(all[:last:last], prompt))
	if err != nil || runID == "" {
		return err
	}
	item := respjson.AppendCompactionItem(nil, contract.CompactionID(runID), s.keys.Seal(x.Identity.TenantID, summary))
	x.Context = append([]runner.Message{{Role: "system", Content: runner.CompactedContextPrefix + summary}}, all[last:]...)
	x.Compacted = &filters.Compacted{Item: item, Usage: usage}
	return nil
}

// compactRun runs the compaction of a turn, whose agent is given input,
// and returns the summary, the run's id and its usage. It runs in the turn's session
// (its conversation's, the one its headers name, or its previous
// response's) and is recorded as endpoint responses.compact; the turn's
// max_output_tokens bounds its answer, not the summary. A run that
// cannot start for a reason the run stage words better returns no id and
// no error: the turn goes on uncompacted, and is refused there.
func (s *Stage) compactRun(ctx context.Context, x *filters.Exchange, input []runner.Message) (string, string, runner.Usage, error) {
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
			return "", "", runner.Usage{}, nil
		}
		if spec.ThreadID, err = filters.HeaderValue(hd, filters.HeaderThreadID, 128, filters.IDChar); err != nil {
			return "", "", runner.Usage{}, nil
		}
	}
	fresh := spec.SessionID == "" && spec.ThreadID == "" && spec.Request.PreviousResponseID == ""
	spec.SessionNamed = spec.SessionID != ""
	h, err := s.auto.Runner.Start(ctx, spec)
	if err != nil {
		if e := apierr.FromRunner(err); e != nil {
			return "", "", runner.Usage{}, e
		}
		return "", "", runner.Usage{}, nil
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
		return "", "", runner.Usage{}, apierr.From(outcome)
	}
	return res.Text, h.Run().ID, res.Usage, nil
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
