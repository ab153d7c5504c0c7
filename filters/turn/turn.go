// Package turn is the room of a Responses turn: the one value a request
// carries for the state the Responses API keeps between turns (Turn, on
// filters.Exchange), the one place its context is assembled before the
// run (Turn.History, read through runner.Service.Context or the run's
// start, inside the admission slot, under one history bound), and the one
// place its after-effects are committed once the run completed, from the
// Response the client got (Turn.Commit). See README.md.
//
// It is not a stage: the stages that fill a turn in (conversation,
// map-request, compaction), the one that starts and ends its run (run)
// and the one that builds its Response (translate) share it, as they
// share filters.Exchange. It imports no stage.
package turn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/runner"
)

// Turn is a Responses turn's state beyond its request. Each stage fills in
// its part before the run starts; nothing is read from the store until
// the run (or the compaction before it) holds an admission slot
// (History).
type Turn struct {
	// Conversation is the conversation the turn continues (the conversation
	// parameter); nil: none. Set by the conversation stage.
	Conversation *Conversation
	// Open, when set, rewrites the earlier items once mapped: the
	// compaction stage opens the compaction items a conversation holds.
	Open func([]runner.Message) ([]runner.Message, error)
	// Context, when not nil, is what the agent is given in place of the
	// assembled history and the input: a compacted context, or the
	// context a compaction assembled already (the run does not read the
	// history again). The request is recorded as sent. Set by the
	// compaction stage.
	Context []runner.Message
	// Compaction is the compaction item the turn's Response carries;
	// nil: none. Set by the compaction stage, read by translate.
	Compaction *Compaction
	// IncludeReasoning: the request's include lists
	// reasoning.encrypted_content. Set by the model stage, which reads the
	// body's top level.
	IncludeReasoning bool
	// SealReasoning, when set, seals the upstream's reasoning for the
	// tenant into the encrypted_content of the Response's reasoning item
	// (IncludeReasoning); the compaction stage opens it when a later turn
	// sends the item back. Set by the compaction stage, with its keys;
	// read by translate.
	SealReasoning func(text string) string
	// SessionID and ThreadID, when set, are the session and thread a
	// compaction run opened for a turn that named none: the turn
	// continues that thread. Set by the compaction stage.
	SessionID, ThreadID string
	// Remember, when set, keeps a completed turn in the memory of the
	// connection it came on (a WebSocket's store:false cache): run is the
	// turn's run, object the Response the client got. Set by the host
	// for a socket turn; called by Commit.
	Remember func(run runner.Run, object []byte)

	once    sync.Once
	history []runner.Message
	err     error
}

// Conversation is the conversation a turn continues: its items go before
// the request's input (read, mapped and opened by History), and once the
// run completes the turn's input and the items of the Response the client
// got are appended to it (Commit).
type Conversation struct {
	// ID is the conversation's id (conv_…), SessionID the session it is.
	ID, SessionID string
	// TenantID is the tenant the turn acts as.
	TenantID string
	// Read reads the conversation's items (OpenAI Responses items, oldest
	// first) within the history bound; set by the conversation stage.
	Read func(ctx context.Context) ([]json.RawMessage, error)
	// Map maps items on their own into the native messages the agent
	// receives before the input (not stored again as the response's
	// input); set by the map-request stage.
	Map func(ctx context.Context, items []json.RawMessage) ([]runner.Message, error)
	// Input is the turn's own input as the conversation lists it
	// (normalised by the conversation stage), appended first.
	Input []runner.ConversationItem
	// Store is where Commit appends the turn; nil: the turn adds nothing
	// (a compaction of the conversation, whose summary is the client's).
	Store runner.ConversationStore
}

// Compaction is the compaction a turn carries in its output: the item
// goes first in the Response's output, and first in its stream.
type Compaction struct {
	// Item is the compaction item (JSON), sealed by a compaction run that
	// ran before the turn (context_management).
	Item []byte
	// Seal, when the turn itself is the compaction (compaction_trigger),
	// seals the agent's answer, which is the summary: the item
	// {"id":"cmp_<run part>","type":"compaction","encrypted_content":…}
	// is then the output's only one and the summary is never sent in clear.
	Seal func(summary string) string
	// Usage is the compaction run's (context_management): it recorded it
	// on its own run, and the turn's Response reports it added to the
	// turn's.
	Usage runner.Usage
}

// History reads, maps and opens the earlier items the turn's run is
// given before its input (a conversation's), once. Its caller holds an
// admission slot: the run's start (runner.StartSpec.LoadHistory) or
// runner.Service.Context. A nil Turn, or one without earlier items, has
// none.
func (t *Turn) History(ctx context.Context) ([]runner.Message, error) {
	if t == nil || t.Conversation == nil {
		return nil, nil
	}
	t.once.Do(func() {
		c := t.Conversation
		if c.Read == nil {
			return
		}
		var items []json.RawMessage
		if items, t.err = c.Read(ctx); t.err != nil || len(items) == 0 {
			return
		}
		if c.Map == nil {
			t.err = errors.New("turn: a conversation's items were read but no stage maps them")
			return
		}
		if t.history, t.err = c.Map(ctx, items); t.err == nil && t.Open != nil {
			t.history, t.err = t.Open(t.history)
		}
	})
	return t.history, t.err
}

// Spec fills in what a run of the turn needs from it: the history it
// reads inside its slot (LoadHistory), or the context assembled already
// (Context), and the conversation's session, or the thread its
// compaction opened. A nil Turn changes nothing.
func (t *Turn) Spec(spec *runner.StartSpec) {
	if t == nil {
		return
	}
	spec.Context = t.Context
	if t.ThreadID != "" && spec.SessionID == "" && spec.ThreadID == "" {
		spec.SessionID, spec.ThreadID = t.SessionID, t.ThreadID
	}
	if c := t.Conversation; c != nil {
		spec.SessionID, spec.SessionNamed, spec.LoadHistory = c.SessionID, true, t.History
	}
}

// Commit is a completed turn's after-effects, the one place they happen,
// from object, the Response the client got (after the result plugin, the
// compaction item in it): the conversation gains the turn's input and the
// Response's output items, and the connection the turn came on remembers
// it (Remember). The run stage calls it once the run is recorded
// completed, before the reply's last byte, so a client that reads the
// conversation (or continues the socket's response) next finds the turn.
// A failed or cancelled turn commits nothing. A conversation deleted
// while the turn ran leaves nothing to append to, and is no error.
func (t *Turn) Commit(ctx context.Context, run runner.Run, object []byte) error {
	if t == nil {
		return nil
	}
	if c := t.Conversation; c != nil && c.Store != nil {
		out, err := OutputItems(object)
		if err != nil {
			return err
		}
		items := append(c.Input[:len(c.Input):len(c.Input)], out...)
		err = c.Store.AppendConversationItems(ctx, c.TenantID, c.SessionID, items)
		var dup *runner.DuplicateItemError
		switch {
		case errors.As(err, &dup):
			// A concurrent turn appended an item of this id after this
			// turn's input was checked (filters/conversation): the input
			// is refused as the check refuses it.
			return apierr.DuplicateItem("input", dup.ID)
		case err != nil && !errors.Is(err, runner.ErrNotFound):
			return err
		}
	}
	if t.Remember != nil && gjson.GetBytes(object, "status").Str == "completed" {
		t.Remember(run, object)
	}
	return nil
}

// OutputItems are the items a completed turn adds to its conversation
// after its input: the output of the Response the client got (object,
// after the result plugin), as it got them, with their types and ids.
// A compaction item a turn's output starts with (context_management) is
// the client's to carry, as POST /v1/responses/compact's is, and is not
// added.
func OutputItems(object []byte) ([]runner.ConversationItem, error) {
	if len(object) == 0 {
		return nil, nil // no Response was made: the turn added its input only
	}
	out := gjson.GetBytes(object, "output")
	if !out.IsArray() {
		return nil, fmt.Errorf("turn: the Response has no output array")
	}
	var items []runner.ConversationItem
	for _, it := range out.Array() {
		if it.Get("type").Str == "compaction" {
			continue
		}
		id := it.Get("id").Str
		if id == "" {
			return nil, fmt.Errorf("turn: an output item of the Response has no id")
		}
		items = append(items, runner.ConversationItem{ID: id, Data: json.RawMessage(it.Raw)})
	}
	return items, nil
}

// ReasoningSealer is the turn's SealReasoning (nil: none, or no turn).
func (t *Turn) ReasoningSealer() func(string) string {
	if t == nil {
		return nil
	}
	return t.SealReasoning
}

// Compacted is the compaction the turn carries (nil: none, or no turn).
func (t *Turn) Compacted() *Compaction {
	if t == nil {
		return nil
	}
	return t.Compaction
}
