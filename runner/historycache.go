package runner

import (
	"context"
	"encoding/json"
	"errors"
)

// A turn's CPU follows what is new in it, not everything said before: a
// host keeps what it last replayed of a previous_response_id chain (the
// agent's messages of each response it replayed, by run id) and what it
// last read of a conversation (its items, by session), so the next turn
// reads from the store only what was added since. A cache entry is never
// trusted on its own: every use first asks the store, in one query that
// reads no message, how many items the history holds (HistoryProbe), and
// an entry is used only when the counts are the ones it was made with.
// Items of a response or of a conversation are only ever added or
// removed, never rewritten (a deleted response, a purged one, a deleted
// conversation item), and the counts are such that an addition or a
// removal on any host changes them (HistoryProbe's documentation), so a
// cache miss, another host's write and a delete are all correct by
// construction. Entries are keyed by tenant and immutable ids.

// HistoryProbe tells, without reading messages, what a history holds. A
// store that has it lets the service keep replayed history in memory
// between turns (historyCache); without it every turn reads everything.
type HistoryProbe interface {
	// ChainCounts walks the previous_response_id chain back from runID,
	// a stored, undeleted response of tenant, at most maxTurns responses
	// (as HistoryStore.Conversation does), and returns how many responses
	// it walked, how many items they hold, and how many of them hold at
	// least one item. A response's items are written once (its input at
	// the start, its output at the end) and removed all at once (deleted
	// or purged), and never come back: so when the counts are equal at
	// two times, the items are the same. ErrNotFound: runID is not such
	// a response.
	ChainCounts(ctx context.Context, tenantID, runID string, maxTurns int) (turns, items, withItems int, err error)
	// ItemCounts returns how many items the responses runIDs hold, and
	// how many of them hold at least one: the same check as ChainCounts
	// for responses already known, in index lookups rather than a walk.
	ItemCounts(ctx context.Context, runIDs []string) (items, withItems int, err error)
	// ConversationCount returns how many items of tenant's undeleted
	// conversation come up to and including the item upTo, in the
	// conversation's order; 0 when upTo is no longer one of them. Items
	// are appended after the others or deleted, never rewritten: the
	// count is the one an earlier read saw exactly when the items up to
	// upTo are those it read.
	ConversationCount(ctx context.Context, tenantID, sessionID, upTo string) (int, error)
}

// historyCacheBytes bounds what a host keeps of replayed chains and of
// read conversations, each: about the messages' bytes (messageBytes, the
// items' JSON), least recently used first out. A 200-turn session of
// 560-byte messages is about 0.3 MB, so a host keeps some fifty of them.
const historyCacheBytes = 16 << 20

// openedMax bounds how many sessions a host remembers to have runs.
const openedMax = 1 << 16

// cacheKey names an entry: the tenant, and the run id of the response
// the entry replays or the conversation's session id. Both ids are
// immutable and never reused.
type cacheKey struct{ tenant, id string }

// entryOverhead is what an entry is counted for beyond its messages'
// bytes: per message, the Message struct and the slice's share of it.
const entryOverhead = 160

// replayed is what replaying a response's chain gave: the agent's
// messages, oldest first, the chain's responses (oldest first, each
// holding items) and how many items they held. Its msgs are shared by
// every turn that uses the entry and never modified: callers get a copy
// (replayCopy).
type replayed struct {
	msgs  []Message
	runs  []string
	items int
	// raw is the stored bytes of the items (the store's history bound
	// counts them).
	raw int
}

// replayCopy returns msgs in a new slice with room for extra more, so
// that the caller may append to it and change its elements.
func replayCopy(msgs []Message, extra int) []Message {
	out := make([]Message, len(msgs), len(msgs)+extra)
	copy(out, msgs)
	return out
}

// replayHistory is the previous_response_id replay of prevRun (rec its
// record), from this host's cache when the store's counts say it holds
// what the store holds: the entry of prevRun itself, or that of the
// response before it and prevRun's own items. extra is room the caller
// will append. A chain whose items hold references, one with a deleted or
// purged response, or one longer than MaxTurns, is replayed from the
// store every turn (resolver.replay).
//
// Only a chain whose every response holds items is kept. Its responses
// then can only gain items (an output written late) or lose all of theirs
// for good (deleted, purged): so when they all still hold items and hold
// as many as the entry was made with, they hold what it was made of.
func (s *Service) replayHistory(ctx context.Context, r *resolver, rec ResponseRecord, prevRun string, extra int) ([]Message, error) {
	if s.probe == nil {
		return r.replay(ctx, prevRun)
	}
	key := cacheKey{r.tenant, prevRun}
	limit := r.bounds.MaxHistoryBytes
	if e, ok := s.chains.Get(key); ok {
		items, with, err := s.probe.ItemCounts(ctx, e.runs)
		if err != nil {
			return nil, err
		}
		if items == e.items && with == len(e.runs) && (limit == 0 || e.raw <= limit) {
			return replayCopy(e.msgs, extra), nil
		}
		s.chains.Remove(key)
	}
	if p, ok := s.chains.Get(cacheKey{r.tenant, rec.PreviousRunID}); ok && rec.PreviousRunID != "" && len(p.runs)+1 < MaxTurns {
		// prevRun's items are read before they are counted: what was
		// counted is then at least what was read, and equal counts mean
		// the parent's items and prevRun's are those read.
		its, err := s.history.ResponseItems(ctx, prevRun)
		if err != nil {
			return nil, err
		}
		if len(its) > 0 && !hasRefs(its) {
			runs := append(p.runs[:len(p.runs):len(p.runs)], prevRun)
			items, with, err := s.probe.ItemCounts(ctx, runs)
			if err != nil {
				return nil, err
			}
			e := replayed{runs: runs, items: p.items + len(its), raw: p.raw + rawBytes(its)}
			if items == e.items && with == len(runs) && limit > 0 && e.raw > limit {
				// The items the store would read, as many bytes as it
				// counts: refused as its read would be, without reading
				// the chain again.
				return nil, historyBoundError(ErrHistoryTooLarge, limit)
			}
			if items == e.items && with == len(runs) {
				e.msgs = replayCopy(p.msgs, len(its))
				for _, it := range its {
					e.msgs = append(e.msgs, it.Message)
				}
				// The parent's entry is superseded: a chain goes on from its
				// newest response, and each entry holds every message of
				// its chain, so keeping them all would cost the square of
				// the chain. A turn that continues the parent again (a
				// regenerated answer) reads it once more.
				s.chains.Remove(cacheKey{r.tenant, rec.PreviousRunID})
				s.chains.Put(key, e, e.cost())
				return replayCopy(e.msgs, extra), nil
			}
		}
	}
	// Counted before it is read: a chain that changed in between is not
	// kept.
	turns, items, with, err := s.probe.ChainCounts(ctx, r.tenant, prevRun, MaxTurns)
	if errors.Is(err, ErrNotFound) {
		return r.replay(ctx, prevRun) // deleted since: as the store says
	} else if err != nil {
		return nil, err
	}
	in, its, err := r.replayItems(ctx, prevRun)
	if err != nil {
		return nil, err
	}
	if with == turns && turns < MaxTurns && len(its) == items && !hasRefs(its) {
		if runs := runsOf(its); len(runs) == with {
			e := replayed{msgs: in[:len(in):len(in)], runs: runs, items: items, raw: rawBytes(its)}
			s.chains.Put(key, e, e.cost())
			return replayCopy(in, extra), nil
		}
	}
	return in, nil
}

// cost is what the entry counts for in its cache.
func (e replayed) cost() int {
	n := len(e.runs) * 40
	for _, m := range e.msgs {
		n += messageBytes(m) + entryOverhead
	}
	return n
}

// hasRefs reports whether a stored item stands for another (refs.go):
// such a chain is resolved afresh every turn.
func hasRefs(its []Item) bool {
	for _, it := range its {
		if it.Message.Ref != "" {
			return true
		}
	}
	return false
}

// rawBytes is the stored size of items, as the store's history bound
// counts it: the stores keep each message as encoding/json writes it.
func rawBytes(its []Item) int {
	n := 0
	for _, it := range its {
		b, _ := json.Marshal(it.Message) // a Message always encodes
		n += len(b)
	}
	return n
}

// runsOf is the responses items come from, in order (they come grouped
// by response).
func runsOf(its []Item) []string {
	var runs []string
	for i, it := range its {
		if i == 0 || it.RunID != its[i-1].RunID {
			runs = append(runs, it.RunID)
		}
	}
	return runs
}
