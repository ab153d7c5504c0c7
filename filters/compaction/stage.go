// Package compaction seals conversation summaries into compaction items
// and opens them again: POST /v1/responses/compact (Compact, Reply) and
// the compaction items of later input (every Responses request, Stage).
// See README.md.
package compaction

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// The native roles the mapping plugin gives compaction input items
// (plugins/compat/compaction.go).
const (
	roleItem    = "compaction"
	roleTrigger = "compaction_trigger"
)

// Stage opens the compaction items of a request's input before its run
// starts: each becomes a system message carrying its summary
// (runner.CompactedContextPrefix). On the compact endpoint it also turns
// the request into a compaction run.
type Stage struct {
	keys    *Keys
	compact bool
	auto    Auto
}

var _ filters.Stage = (*Stage)(nil)

// New returns the stage of the Responses chain: it opens compaction items,
// and compacts a turn that asks for it with auto (auto.go).
func New(keys *Keys, auto Auto) *Stage { return &Stage{keys: keys, auto: auto} }

// NewCompact returns the stage of the compact chain: it opens compaction
// items, then asks the agent for a summary (runner.CompactionPrompt) in a
// run recorded as endpoint responses.compact.
func NewCompact(keys *Keys) *Stage { return &Stage{keys: keys, compact: true} }

// Name is "compaction".
func (*Stage) Name() string { return contract.StageCompaction }

// Handle rewrites x.Native.Input (and, for a turn that compacts, sets its
// turn's Context and Compaction), then calls next.
func (s *Stage) Handle(ctx context.Context, x *filters.Exchange, next filters.Handler) error {
	in, err := s.openReasoning(x.Identity.TenantID, x.Native.Input)
	if err != nil {
		return err
	}
	in, trigger, err := s.open(x.Identity.TenantID, in)
	if err != nil {
		return err
	}
	x.Native.Input = in
	if t := x.Turn; t != nil && t.Conversation != nil {
		// Opened as they are read, inside the run's admission slot.
		tenant := x.Identity.TenantID
		t.Open = func(ms []runner.Message) ([]runner.Message, error) { return s.openHistory(tenant, ms) }
	}
	if t := x.Turn; t != nil && t.IncludeReasoning && !s.compact {
		tenant := x.Identity.TenantID
		t.SealReasoning = func(text string) string { return s.keys.Seal(tenant, text) }
	}
	if s.compact {
		// The request is a compaction already: a trigger adds nothing,
		// and context_management does not apply.
		prepare(x)
		return next.Handle(ctx, x)
	}
	limit, err := threshold(x)
	if err != nil {
		return err
	}
	if trigger >= 0 || limit > 0 {
		if err := s.compactTurn(ctx, x, trigger, limit); err != nil {
			return err
		}
	}
	return next.Handle(ctx, x)
}

// open replaces each compaction item of in with the system message of its
// summary, and takes out a compaction_trigger, which must be the final
// input item (trigger is its index in the client's input, -1 without
// one). in is copied before the first change.
//
// A compaction item stands for the turns before it, and Codex sends it
// last, after the user messages the compaction kept: its summary goes
// first, before the turns it replaces (after the leading system and
// developer messages), never as a system message after the last user
// message, which several chat templates refuse.
func (s *Stage) open(tenant string, in []runner.Message) (_ []runner.Message, trigger int, _ error) {
	trigger = -1
	var summaries []runner.Message
	for i, m := range in {
		switch m.Role {
		case roleItem:
		case roleTrigger:
			if i != len(in)-1 {
				return nil, -1, apierr.InvalidBody(fmt.Sprintf("input[%d]", m.RefIndex),
					"a compaction_trigger must be the final input item")
			}
			trigger = m.RefIndex
			continue
		default:
			continue
		}
		summary, err := s.keys.Open(tenant, m.Text())
		if err != nil {
			return nil, -1, notOpened(m.RefIndex, err)
		}
		summaries = append(summaries, runner.Message{Role: "system", Content: runner.CompactedContextPrefix + summary})
	}
	if summaries == nil {
		if trigger >= 0 {
			return in[: len(in)-1 : len(in)-1], trigger, nil
		}
		return in, -1, nil
	}
	lead := 0
	for lead < len(in) && (in[lead].Role == "system" || in[lead].Role == "developer") {
		lead++
	}
	out := make([]runner.Message, 0, len(in))
	out = append(append(out, in[:lead]...), summaries...)
	for _, m := range in[lead:] {
		if m.Role != roleItem && m.Role != roleTrigger {
			out = append(out, m)
		}
	}
	return out, trigger, nil
}

// notOpened is the 400 of input item i, whose encrypted_content did not
// open (err, from Keys.Open).
func notOpened(i int, err error) error {
	param := fmt.Sprintf("input[%d].encrypted_content", i)
	why := "was not sealed by this service for this tenant, or was altered since"
	if errors.Is(err, ErrUnknownKey) {
		why = "was sealed with a key this service does not hold (rotated out, or another deployment's)"
	}
	e := apierr.InvalidBody(param, "%s %s", param, why)
	e.Err = err
	return e
}

// openReasoning opens the encrypted_content of each reasoning item of in
// (sealed by a turn that asked for it with include) into its
// Reasoning.Opened, which the provider sends upstream with the assistant
// message after it. An encrypted_content that fails authentication
// (another tenant's, altered, another service's) is a 400 naming it, as a
// compaction item's is. One sealed with a key this host does not hold
// (rotated out, or a host without compaction.keys that restarted: Codex
// resends every reasoning item each turn) is forgiven: the item is kept
// and nothing is opened, so the upstream goes without that reasoning
// rather than every turn of the session being refused. A compaction item
// is not forgiven: it stands for the turns it replaced. An Opened a
// mapping set is cleared, as only this stage opens. in is copied before the first change; the items'
// Reasoning values are not changed in place.
func (s *Stage) openReasoning(tenant string, in []runner.Message) ([]runner.Message, error) {
	var out []runner.Message
	for i, m := range in {
		r := m.Reasoning
		if m.Role != runner.RoleReasoning || r == nil || (r.EncryptedContent == "" && r.Opened == "") {
			continue
		}
		opened := ""
		if r.EncryptedContent != "" {
			var err error
			if opened, err = s.keys.Open(tenant, r.EncryptedContent); errors.Is(err, ErrUnknownKey) {
				opened = ""
			} else if err != nil {
				return nil, notOpened(m.RefIndex, err)
			}
		}
		if out == nil {
			out = slices.Clone(in)
		}
		c := *r
		c.Opened = opened
		out[i].Reasoning = &c
	}
	if out == nil {
		return in, nil
	}
	return out, nil
}

// openHistory opens the compaction items of a conversation's items, as
// open does the input's; a compaction_trigger there (it ends a request,
// not a conversation) is dropped, and an item that does not open is a 400
// naming conversation.
func (s *Stage) openHistory(tenant string, in []runner.Message) ([]runner.Message, error) {
	// Copied only when there is a trigger to take out: open copies what it
	// changes, and a long history copied every turn made each turn dearer.
	kept := in
	if slices.ContainsFunc(in, func(m runner.Message) bool { return m.Role == roleTrigger }) {
		kept = make([]runner.Message, 0, len(in))
		for _, m := range in {
			if m.Role != roleTrigger {
				kept = append(kept, m)
			}
		}
	}
	out, _, err := s.open(tenant, kept)
	var e *apierr.Error
	if errors.As(err, &e) {
		e.Param, e.Message = "conversation", "a compaction item of the conversation "+strings.TrimPrefix(e.Message, e.Param+" ")
	}
	return out, err
}

func unsupported(param, msg string) *apierr.Error {
	e := apierr.New(apierr.CodeUnsupportedParameter, msg)
	e.Param = param
	return e
}

// prepare makes x a compaction run: the summary prompt after the input
// (unless Input put it there already),
// one whole answer (no stream, no tools, no output schema), recorded as
// endpoint responses.compact, so it is a run in the history but no
// stored response.
func prepare(x *filters.Exchange) {
	n := &x.Native
	if k := len(n.Input); k == 0 || !runner.IsCompactionPrompt(n.Input[k-1]) {
		n.Input = append(n.Input[:k:k], runner.Message{Role: "user", Content: runner.CompactionPrompt})
	}
	n.Stream, x.Stream = false, false
	n.Background = false
	n.Tools, n.ToolChoice, n.ParallelToolCalls = nil, runner.ToolChoice{}, nil
	n.OutputSchema, n.SchemaName, n.JSONObject = nil, "", false
	x.Endpoint = filters.ResponsesCompact
}
