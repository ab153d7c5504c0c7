package compaction

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/turn"
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
//     Nothing precedes it, or the turn's own part (instructions, tools,
//     that message and what follows it) counts more than the threshold
//     alone: nothing is compacted, as a summary cannot bring the context
//     under the threshold. The Response's usage is the turn's and the
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
	t := x.TurnOf()
	if trigger >= 0 && t.Conversation != nil {
		// The turn would append the trigger, and the summary in clear,
		// to the conversation.
		return unsupported(fmt.Sprintf("input[%d]", trigger),
			"a compaction_trigger cannot end a conversation turn: compact the conversation with POST /v1/responses/compact")
	}
	// The turn's context is assembled once, in an admission slot of the
	// turn's token and tenant (runner.Service.Context: the turns of
	// previous_response_id, the conversation's items, the input), counted
	// in it, and handed to the run (Turn.Context), which does not read it
	// again.
	spec := runner.StartSpec{TenantID: x.Identity.TenantID, Token: x.Identity.Token, Request: x.Native}
	var readErr error // the conversation's read, apart from the rest
	if t.Conversation != nil {
		spec.LoadHistory = func(ctx context.Context) ([]runner.Message, error) {
			ms, err := t.History(ctx)
			readErr = err
			return ms, err
		}
	}
	all, release, err := a.Runner.Context(ctx, spec)
	release = sync.OnceFunc(release)
	defer release()
	if readErr != nil {
		var be *runner.BoundError
		if errors.As(readErr, &be) {
			e := apierr.InvalidBody(be.Param, "%s", be.Msg)
			e.Err = readErr
			return e
		}
		return readErr
	}
	if err != nil {
		// What cannot be resolved (an unknown previous response, an
		// item reference) is left to the run stage, which refuses it in
		// its words.
		return nil
	}
	prompt := runner.Message{Role: "user", Content: runner.CompactionPrompt}
	if trigger >= 0 {
		release()
		t.Context = append(all, prompt)
		n := &x.Native
		n.Tools, n.ToolChoice, n.ParallelToolCalls, n.MaxToolCalls = nil, runner.ToolChoice{}, nil, 0
		n.OutputSchema, n.SchemaName, n.JSONObject = nil, "", false
		tenant := x.Identity.TenantID
		t.Compaction = &turn.Compaction{Seal: func(summary string) string { return s.keys.Seal(tenant, summary) }}
		return nil
	}
	// Only what precedes the last user message is compacted: that
	// message (and the calls and results after it) is the turn's own and
	// goes upstream as it is. With nothing before it, or when the turn's
	// own part crosses the threshold alone, a summary cannot bring the
	// context under it and would only add to it: nothing is compacted.
	last := lastUser(all)
	over := false
	if last > 0 {
		req := x.Native
		req.Input = all
		if over = a.InputTokens(req) > limit; over {
			req.Input = all[last:]
			over = a.InputTokens(req) <= limit
		}
	}
	release()
	t.Context = all
	if !over {
		return nil
	}
	summary, runID, usage, err := s.compactRun(ctx, x, append(all[:last:last], prompt))
	if err != nil || runID == "" {
		return err
	}
	item := respjson.AppendCompactionItem(nil, contract.CompactionID(runID), s.keys.Seal(x.Identity.TenantID, summary))
	t.Context = append([]runner.Message{{Role: "system", Content: runner.CompactedContextPrefix + summary}}, all[last:]...)
	t.Compaction = &turn.Compaction{Item: item, Usage: usage}
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
	if c := x.Turn.Conversation; c != nil {
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
	// Started and ended by the run service, as every run is: recorded,
	// its usage in the ledger, its outcome mapped as the run stage maps
	// a turn's.
	run, res, err := s.auto.Runner.Complete(ctx, spec)
	if run.ID == "" {
		if e := apierr.FromRunner(err); e != nil {
			return "", "", runner.Usage{}, e
		}
		return "", "", runner.Usage{}, nil
	}
	if fresh {
		// The compaction opened the turn's session: the turn continues
		// its thread, as the run stage continues a body-named one.
		x.Turn.SessionID, x.Turn.ThreadID = run.SessionID, run.ThreadID
	}
	if err != nil {
		return "", "", runner.Usage{}, apierr.From(err)
	}
	return res.Text, run.ID, res.Usage, nil
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
