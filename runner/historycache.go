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
// trusted on its own: every use first asks the store, in one read of one
// row, for the tenant's forget generation (HistoryProbe), and an entry is
// used only when it is the one the entry was made under.
//
// Why one number suffices. What an entry holds can change in two ways
// only. Items are removed: a response deleted or purged (forgotten), a
// conversation deleted, one of its items deleted; every such write
// raises the generation of the tenant in its own transaction (the
// stores' schema does, by triggers, so no path can forget to), so a
// reader never sees the removal without the new generation. Or items
// are added: a conversation's are appended after all the others (the
// cache reads what follows the last item it holds, every turn), and a
// response's output is written at its end, once, all items in one write,
// possibly after an entry was made (a background response, one
// continued while it still ran, a cancelled one whose end comes late).
// So a chain entry takes only responses that hold an output item: their
// items are final, and can then only be removed. The generation is read
// before the items an entry is made of: a removal between the two leaves
// the entry with a generation older than the store's, never trusted. An
// entry made under the generation the store still has therefore holds
// what the store would read, on any host. Entries are keyed by tenant and
// immutable ids, and one tenant's removals empty no other tenant's
// entries.

// HistoryProbe tells, without reading messages, what a history holds. A
// store that has it lets the service keep replayed history in memory
// between turns (historyCache); without it every turn reads everything.
type HistoryProbe interface {
	// ForgetGeneration returns tenant's forget generation: a number that
	// every write removing items of tenant's history raises in its own
	// transaction (deleting or purging a response, deleting a
	// conversation or one of its items), and no other write changes.
	// Items written are never rewritten: a response's input at its start,
	// its output at its end in one write; a conversation's after all its
	// others. So while the generation is the same, every item read
	// before is still there, as it was read.
	ForgetGeneration(ctx context.Context, tenantID string) (int64, error)
	// ChainCounts walks the previous_response_id chain back from runID,
	// a stored, undeleted response of tenant, at most maxTurns responses
	// (as HistoryStore.Conversation does), and returns how many responses
	// it walked, how many items they hold, and how many of them hold at
	// least one item. ErrNotFound: runID is not such a response. A host
	// counts a chain once, when it first keeps it.
	ChainCounts(ctx context.Context, tenantID, runID string, maxTurns int) (turns, items, withItems int, err error)
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
// messages, oldest first, and the chain's responses (oldest first, each
// holding items, its output among them). Its msgs are shared by
// every turn that uses the entry and never modified: callers get a copy
// (replayCopy).
type replayed struct {
	msgs []Message
	runs []string
	// gen is the tenant's forget generation read before the items were.
	gen int64
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
// record), from this host's cache when the store's forget generation is
// the one the entry was made under: the entry of prevRun itself, or that
// of the response before it and prevRun's own items. extra is room the
// caller will append. A chain whose items hold references, one with a
// deleted or purged response, one longer than MaxTurns, or one with a
// response whose output is not written (still running, failed, cancelled
// before an answer), is replayed from the store every turn
// (resolver.replay).
func (s *Service) replayHistory(ctx context.Context, r *resolver, rec ResponseRecord, prevRun string, extra int) ([]Message, error) {
	if s.probe == nil {
		return r.replay(ctx, prevRun)
	}
	key := cacheKey{r.tenant, prevRun}
	limit := r.bounds.MaxHistoryBytes
	e, hit := s.chains.Get(key)
	p, parent := s.chains.Get(cacheKey{r.tenant, rec.PreviousRunID})
	parent = parent && rec.PreviousRunID != "" && len(p.runs)+1 < MaxTurns
	// Read before any item is: a removal after it leaves what is read
	// under a generation older than the store's.
	gen, err := s.probe.ForgetGeneration(ctx, r.tenant)
	if err != nil {
		return nil, err
	}
	if hit {
		if e.gen == gen && (limit == 0 || e.raw <= limit) {
			return replayCopy(e.msgs, extra), nil
		}
		s.chains.Remove(key)
	}
	if parent && p.gen == gen {
		its, err := s.history.ResponseItems(ctx, prevRun)
		if err != nil {
			return nil, err
		}
		if final(its) && !hasRefs(its) {
			runs := append(p.runs[:len(p.runs):len(p.runs)], prevRun)
			e := replayed{runs: runs, raw: p.raw + rawBytes(its), gen: gen}
			if limit > 0 && e.raw > limit {
				// The items the store would read, as many bytes as it
				// counts: refused as its read would be, without reading
				// the chain again.
				return nil, historyBoundError(ErrHistoryTooLarge, limit)
			}
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
		if runs := runsOf(its); len(runs) == with && allFinal(its) {
			e := replayed{msgs: in[:len(in):len(in)], runs: runs, raw: rawBytes(its), gen: gen}
			s.chains.Put(key, e, e.cost())
			return replayCopy(in, extra), nil
		}
	}
	return in, nil
}

// final reports whether its, one response's items, are all it will ever
// hold: its output is written (HistoryProbe), which it is, with the rest
// of the output, in one write at the response's end.
func final(its []Item) bool {
	for _, it := range its {
		if it.Output {
			return true
		}
	}
	return false
}

// allFinal is final for each response of its (grouped by response, as a
// chain's items come).
func allFinal(its []Item) bool {
	for i := 0; i < len(its); {
		j := i + 1
		for j < len(its) && its[j].RunID == its[i].RunID {
			j++
		}
		if !final(its[i:j]) {
			return false
		}
		i = j
	}
	return true
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
