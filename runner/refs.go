package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/runedge/runedge/internal/contract"
)

// A request's item references and the turns previous_response_id replays
// are resolved by one resolver, under the service's HistoryBounds: a bound
// on references, each distinct id read once, and a byte budget on what
// they resolve to. The stored input keeps the references themselves, each
// naming the item it finally stands for (a reference to an input item that
// was itself a reference names that one's target), so storing a request
// never copies what it references, and a replay resolves in one step.

// resolver resolves item references of one tenant for one request.
type resolver struct {
	s      *Service
	tenant string
	bounds HistoryBounds
	items  map[string]lookup // by stored message id: each read once
}

type lookup struct {
	it  Item
	err error
}

func (s *Service) newResolver(tenant string) *resolver {
	return &resolver{s: s, tenant: tenant, bounds: s.bounds}
}

// item reads the stored message id once per request.
func (r *resolver) item(ctx context.Context, id string) (Item, error) {
	if l, ok := r.items[id]; ok {
		return l.it, l.err
	}
	if len(r.items) >= r.bounds.MaxReferences {
		return Item{}, &BoundError{Param: "input", Msg: fmt.Sprintf(
			"the request references more than %d distinct items (limits.history.max_references)", r.bounds.MaxReferences)}
	}
	it, err := r.s.history.GetItem(ctx, r.tenant, id)
	if r.items == nil {
		r.items = map[string]lookup{}
	}
	r.items[id] = lookup{it, err}
	return it, err
}

// target is the id a reference finally stands for: a stored input item
// that was itself a reference stands for what that one names (stored
// references are always final, so one step suffices).
func (r *resolver) target(ctx context.Context, ref string) (string, error) {
	if _, _, ok := contract.CallOf(ref); ok {
		return ref, nil
	}
	if !contract.IsItemID(ref) {
		return ref, fmt.Errorf("%w: item %.40q is not a well-formed id", ErrNotFound, ref)
	}
	it, err := r.item(ctx, ref)
	if err != nil || it.Message.Ref == "" {
		return ref, err
	}
	return it.Message.Ref, nil
}

// requestInput returns the request's input with its references resolved,
// refusing more than MaxReferences of them or more than MaxReferenceBytes
// of resolved messages. Each reference in input is rewritten to name the
// item it finally stands for: that is what is stored.
func (r *resolver) requestInput(ctx context.Context, input []Message) ([]Message, error) {
	n := 0
	for _, m := range input {
		if m.Ref != "" {
			n++
		}
	}
	if n > r.bounds.MaxReferences {
		return nil, &BoundError{Param: "input", Msg: fmt.Sprintf(
			"%d item references; at most %d are allowed (limits.history.max_references)", n, r.bounds.MaxReferences)}
	}
	var budget ByteBudget
	return r.resolve(ctx, input, func(m Message, it Item, size int) error {
		if m.Ref == "" {
			return nil
		}
		if budget.Spend(size, r.bounds.MaxReferenceBytes) != nil {
			return &BoundError{Param: fmt.Sprintf("input[%d]", m.RefIndex), Msg: fmt.Sprintf(
				"the items this request references hold more than %d bytes (limits.history.max_reference_bytes)", r.bounds.MaxReferenceBytes)}
		}
		return nil
	}, true)
}

// replay returns the turns of prevRun and those before it, references
// resolved, within MaxHistoryBytes: the store stops reading past it, and
// what references add is counted against what is left. A reference whose
// item was deleted since is left out: deleting it removed it from every
// continuation.
func (r *resolver) replay(ctx context.Context, prevRun string) ([]Message, error) {
	out, _, err := r.replayItems(ctx, prevRun)
	return out, err
}

// replayItems is replay, also returning the stored items it read.
func (r *resolver) replayItems(ctx context.Context, prevRun string) ([]Message, []Item, error) {
	limit := r.bounds.MaxHistoryBytes
	items, err := r.s.history.Conversation(ctx, r.tenant, prevRun, MaxTurns, limit)
	if err != nil {
		return nil, nil, historyBoundError(err, limit)
	}
	in := make([]Message, 0, len(items))
	var budget ByteBudget
	for _, it := range items {
		_ = budget.Spend(messageBytes(it.Message), 0)
		in = append(in, it.Message)
	}
	out, err := r.resolve(ctx, in, func(m Message, it Item, size int) error {
		if m.Ref == "" {
			return nil
		}
		return budget.Spend(size, limit)
	}, false)
	if err != nil {
		var be *BoundError
		if !errors.As(err, &be) || be.Param != "input" {
			return nil, nil, historyBoundError(err, limit)
		}
		be.Param = "previous_response_id"
		return nil, nil, be
	}
	return out, items, nil
}

// resolve replaces the references in input with the stored items they
// name, calling spend for each resolved message (its size) before it is
// added. A stored output message is its text only: its calls are items of
// their own in the Response (fc_…, contract.CallID), which a client
// references separately, as the Vercel AI SDK does in a tool loop. A
// referenced call joins the assistant message just before it when that
// message came from a reference too (the message of the same turn, or the
// call before it), so a turn's text and calls become one assistant
// message, as a mapping plugin joins consecutive function_call items.
// strict: an unknown reference is ErrItemNotFound; otherwise it is
// dropped. In strict mode each reference in input is rewritten to name the
// item it finally stands for.
func (r *resolver) resolve(ctx context.Context, input []Message, spend func(m Message, it Item, size int) error, strict bool) ([]Message, error) {
	out := make([]Message, 0, len(input))
	lastRef := -1 // index in out of the last message resolved from a reference
	for k, m := range input {
		if m.Ref == "" {
			out = append(out, m)
			continue
		}
		notFound := func(err error) error {
			if errors.Is(err, ErrNotFound) {
				if !strict {
					return nil
				}
				return &ItemNotFoundError{Index: m.RefIndex, ID: m.Ref}
			}
			return err
		}
		ref, err := r.target(ctx, m.Ref)
		if err != nil {
			if err = notFound(err); err != nil {
				return nil, err
			}
			continue
		}
		if strict {
			input[k].Ref = ref
		}
		if msgID, i, ok := contract.CallOf(ref); ok {
			it, err := r.item(ctx, msgID)
			if err == nil && (!it.Output || i >= len(it.Message.ToolCalls)) {
				err = fmt.Errorf("%w: not a call", ErrNotFound)
			}
			if err != nil {
				if err = notFound(err); err != nil {
					return nil, err
				}
				continue
			}
			call := it.Message.ToolCalls[i]
			if err := spend(m, it, messageBytes(Message{ToolCalls: []ToolCall{call}})); err != nil {
				return nil, err
			}
			if lastRef == len(out)-1 && lastRef >= 0 && out[lastRef].Role == "assistant" {
				out[lastRef].ToolCalls = append(out[lastRef].ToolCalls, call)
				continue
			}
			out = append(out, Message{Role: "assistant", ToolCalls: []ToolCall{call}})
			lastRef = len(out) - 1
			continue
		}
		it, err := r.item(ctx, ref)
		if err != nil {
			if err = notFound(err); err != nil {
				return nil, err
			}
			continue
		}
		msg := it.Message
		if it.Output {
			msg.ToolCalls = nil // referenced as fc_ items of their own
		}
		if err := spend(m, it, messageBytes(msg)); err != nil {
			return nil, err
		}
		out = append(out, msg)
		lastRef = len(out) - 1
	}
	return out, nil
}
