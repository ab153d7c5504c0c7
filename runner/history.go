package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/runedge/runedge/internal/contract"
)

// The Responses API's state lives in the run history (README.md "Responses that
// remember"): a stored response is a run with a response record beside it, its
// input and output items, and the stream events it sent. A run of
// store:false has no record, so every lookup of it fails like an unknown id.

// Errors of the stateful features, detected before a run is created.
var (
	// ErrPreviousResponseNotFound: previous_response_id is unknown,
	// deleted, not stored, or another tenant's.
	ErrPreviousResponseNotFound = errors.New("previous response not found")
	// ErrItemNotFound: an item reference names no stored item of the
	// tenant. The error is an *ItemNotFoundError, which says which input.
	ErrItemNotFound = errors.New("item not found")
	// ErrNoHistory: the store keeps no response history.
	ErrNoHistory = errors.New("the run store keeps no response history")
)

// ItemNotFoundError names the input message whose reference did not
// resolve.
type ItemNotFoundError struct {
	Index int
	ID    string
}

func (e *ItemNotFoundError) Error() string {
	return fmt.Sprintf("%v: input[%d] references %q", ErrItemNotFound, e.Index, e.ID)
}

// Is makes errors.Is(err, ErrItemNotFound) hold.
func (e *ItemNotFoundError) Is(target error) bool { return target == ErrItemNotFound }

// Item is one stored input or output item of a response. Its message is in
// the native form, so replaying it to the agent needs no mapping; the id
// is what clients reference (msg_…, fc_…).
type Item struct {
	ID      string
	RunID   string
	Output  bool
	Message Message
}

// ResponseRecord is what is kept of a stored response beside its run.
type ResponseRecord struct {
	RunID, TenantID string
	// PreviousRunID is the run of previous_response_id, "" for a first turn.
	PreviousRunID string
	Background    bool
	// Echo is the request mapping's echo: with it the host rebuilds the
	// Response object of a run that has no final object yet.
	Echo json.RawMessage
	// Object is the final Response object as sent, nil until the run ends
	// with one.
	Object json.RawMessage
}

// StoredEvent is one persisted stream event; Seq is its sequence number in
// the stream, from 0.
type StoredEvent struct {
	Seq  int
	Name string
	Data []byte
}

// HistoryStore keeps the response history. It is separate from Store so a
// store gains it without every Store having to; the service checks for it.
// Lookups scoped by tenant answer ErrNotFound for another tenant's ids.
type HistoryStore interface {
	// BeginResponse records a stored response and its input items, in one
	// write.
	BeginResponse(ctx context.Context, rec ResponseRecord, input []Item) error
	// EndResponse records the final Response object (nil: none) and the
	// output items, in one write.
	EndResponse(ctx context.Context, runID string, object []byte, output []Item) error
	// GetResponse returns the record of a stored, undeleted response.
	GetResponse(ctx context.Context, tenantID, runID string) (ResponseRecord, error)
	// ResponseItems returns a response's items, inputs then outputs, in
	// their order.
	ResponseItems(ctx context.Context, runID string) ([]Item, error)
	// Conversation returns the items of runID and of the responses before
	// it along previous_response_id, oldest first, looking back at most
	// maxTurns responses. It stops reading, with ErrHistoryTooLarge, once
	// the items' stored messages pass maxBytes (0: no bound), so a long
	// history costs no more memory than the bound.
	Conversation(ctx context.Context, tenantID, runID string, maxTurns, maxBytes int) ([]Item, error)
	// GetItem returns one stored item of tenant.
	GetItem(ctx context.Context, tenantID, id string) (Item, error)
	// DeleteResponse removes a response's items, object and events and
	// marks it deleted; the run row stays.
	DeleteResponse(ctx context.Context, tenantID, runID string) error
	// AppendEvents stores a batch of a run's stream events in one write:
	// a stored response's, or a run's that is no response (a native run);
	// a deleted response's is ErrNotFound. lease, when not 0, fences the
	// write as Transition.Lease does: the batch is kept only while the
	// run's lease token is still lease, in the same statement, and is
	// ErrFenced otherwise (another host took the run over and writes its
	// events now).
	AppendEvents(ctx context.Context, runID string, lease int64, batch []StoredEvent) error
	// Events returns a run's stored events with Seq > after, in order,
	// read from at most batches stored batches (AppendEvents' writes, each
	// of at most a few hundred events): a reader pages through a long
	// stream from its cursor, calling again after the last Seq it got.
	// An empty result means there is nothing after the cursor.
	Events(ctx context.Context, runID string, after, batches int) ([]StoredEvent, error)
}

// HistoryJoiner is implemented by a HistoryStore whose first and last
// writes can join the run's own: BeginResponse's write the run's StartRun,
// EndResponse's its terminal Transition. Each returns a context for that
// run write and a function that reports, once the run write returned,
// whether the history write was made with it (committed in the same
// transaction). When it was not (the store made no joinable write under
// that context, or declined: a very large input), the caller makes the
// history write itself. A joined end write is made even when the
// Transition is refused because the run already ended by another writer
// (a cancel): the object and output item are what the client received.
// It is not made when the run's lease token is no longer lease (when not
// 0), as the Transition it joins is fenced (Transition.Lease): another
// acquisition of the run writes its end. The condition is in the write's
// own statements, since it runs whether or not the Transition changed a
// row.
type HistoryJoiner interface {
	JoinBegin(ctx context.Context, rec ResponseRecord, input []Item) (context.Context, func() bool)
	JoinEnd(ctx context.Context, runID string, lease int64, object []byte, output []Item) (context.Context, func() bool)
}

// NotJoined is the report of a history write that did not join a run
// write (HistoryJoiner): the caller writes it on its own.
func NotJoined() bool { return false }

// joinBegin and joinEnd are the service's side of HistoryJoiner.
func (s *Service) joinBegin(ctx context.Context, rec ResponseRecord, input []Item) (context.Context, func() bool) {
	if j, ok := s.history.(HistoryJoiner); ok {
		return j.JoinBegin(ctx, rec, input)
	}
	return ctx, NotJoined
}

func (s *Service) joinEnd(ctx context.Context, runID string, lease int64, object []byte, output []Item) (context.Context, func() bool) {
	if j, ok := s.history.(HistoryJoiner); ok {
		return j.JoinEnd(ctx, runID, lease, object, output)
	}
	return ctx, NotJoined
}

// MaxTurns bounds how many earlier responses previous_response_id replays.
const MaxTurns = 256

// History returns the store's response history, or nil.
func (s *Service) History() HistoryStore { return s.history }

// prepare resolves a responses request's references before its run is
// created: item references become the stored messages, and
// previous_response_id places the run in that response's session and
// thread and yields the earlier turns (unless replay is false: a
// compaction resolved them already, StartSpec.Context). It returns the
// agent's input (history, then the resolved input). It reads the history:
// its caller holds an admission slot (Start, Input). The request's own input keeps its
// references (each naming the stored item it finally stands for), so the
// stored input holds references, not copies (refs.go).
func (s *Service) prepare(ctx context.Context, spec *StartSpec, replay bool) ([]Message, string, error) {
	req := &spec.Request
	hasRef := false
	for _, m := range req.Input {
		hasRef = hasRef || m.Ref != ""
	}
	if !hasRef && req.PreviousResponseID == "" && !req.Background {
		return req.Input, "", nil
	}
	if s.history == nil {
		return nil, "", fmt.Errorf("%w: %w", ErrInvalidRequest, ErrNoHistory)
	}
	r := s.newResolver(spec.TenantID)
	input := req.Input
	if hasRef {
		resolved, err := r.requestInput(ctx, req.Input)
		if err != nil {
			return nil, "", err
		}
		input = resolved
	}
	if req.PreviousResponseID == "" {
		return input, "", nil
	}
	prevRun, ok := contract.RunIDOf(req.PreviousResponseID)
	if !ok {
		return nil, "", fmt.Errorf("%w: %q", ErrPreviousResponseNotFound, req.PreviousResponseID)
	}
	rec, err := s.history.GetResponse(ctx, spec.TenantID, prevRun)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, "", fmt.Errorf("%w: %q", ErrPreviousResponseNotFound, req.PreviousResponseID)
		}
		return nil, "", err
	}
	prev, err := s.store.GetRun(ctx, spec.TenantID, prevRun)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, "", err // the store failed: not the client's mistake
	}
	if err != nil || prev.TenantID != spec.TenantID {
		return nil, "", fmt.Errorf("%w: %q", ErrPreviousResponseNotFound, req.PreviousResponseID)
	}
	if spec.SessionID == "" && spec.ThreadID == "" {
		spec.SessionID, spec.ThreadID = prev.SessionID, prev.ThreadID
	}
	if !replay {
		return input, prevRun, nil
	}
	in, err := s.replayHistory(ctx, r, rec, prevRun, len(input))
	if err != nil {
		return nil, "", err
	}
	return append(in, input...), prevRun, nil
}

// inputItems gives the new input messages their item ids (InputItemID).
// Ids are the store's own, not the client's (a client replays the same
// reasoning item every turn).
func inputItems(runID string, in []Message) []Item {
	items := make([]Item, len(in))
	for i, m := range in {
		items[i] = Item{ID: InputItemID(runID, i, m.Role), RunID: runID, Message: m}
	}
	return items
}

// InputItemID is the id of the i-th input item of run runID: rs_X_i for
// a reasoning item, msg_X_i for the rest (run_X; contract's prefixes). It
// follows from the run and the position, so a store that keeps an input
// by reference to items it holds already (a client that resends its
// history every turn) need not keep the ids of the items it shares
// (RATIONALE.md "Each item stored once"); it stays unguessable, as the
// run's id is.
func InputItemID(runID string, i int, role string) string {
	id := contract.InputMessageID(runID, i)
	if role == RoleReasoning {
		return contract.ReasoningID(id)
	}
	return id
}

// A stored response's final object repeats its output text (the message's
// content part and output_text), and the output item holds it too. A store
// keeps the object compact: a header byte, then the object with each
// occurrence of the text's JSON string replaced by one marker byte; it is
// rebuilt from the output item on read. Header and markers are control
// bytes, which JSON never holds raw, so a stored object is compact exactly
// when it begins with the header. Two escapings are recognised: Go's
// default (HTML characters as \u003c…) and the plain one.
const (
	compactHeader = '\x01'
	markPlain     = '\x02'
	markHTML      = '\x03'
	// compactAbove: shorter texts are not worth the work.
	compactAbove = 64
)

// CompactObject returns the stored form of a final Response object whose
// output text is text: compact when the object holds the text's JSON
// string, else object unchanged (also when the text is short or not valid
// UTF-8, which JSON would not keep as is, or the object is not a JSON
// object). ExpandObject(CompactObject(o, t), t) == o for every JSON o.
func CompactObject(object []byte, text string) []byte {
	if len(text) < compactAbove || !utf8.ValidString(text) || len(object) == 0 || object[0] != '{' ||
		bytes.ContainsAny(object, "\x01\x02\x03") {
		return object
	}
	for _, mark := range []byte{markPlain, markHTML} {
		q := quoteJSON(text, mark == markHTML)
		if n := bytes.Count(object, q); n > 0 {
			out := make([]byte, 1, len(object)-n*(len(q)-1)+1)
			out[0] = compactHeader
			for {
				i := bytes.Index(object, q)
				if i < 0 {
					break
				}
				out = append(append(out, object[:i]...), mark)
				object = object[i+len(q):]
			}
			return append(out, object...)
		}
	}
	return object
}

// IsCompact reports whether a stored object needs its output text back
// (ExpandObject).
func IsCompact(stored []byte) bool { return len(stored) > 0 && stored[0] == compactHeader }

// ExpandObject rebuilds the object CompactObject stored, given the same
// text; any other stored object is returned as is.
func ExpandObject(stored []byte, text string) []byte {
	if !IsCompact(stored) {
		return stored
	}
	stored = stored[1:]
	out := make([]byte, 0, len(stored)+2*len(text)+64)
	var q [2][]byte
	for {
		i := bytes.IndexAny(stored, "\x02\x03")
		if i < 0 {
			return append(out, stored...)
		}
		k := int(stored[i] - markPlain)
		if q[k] == nil {
			q[k] = quoteJSON(text, stored[i] == markHTML)
		}
		out = append(append(out, stored[:i]...), q[k]...)
		stored = stored[i+1:]
	}
}

// quoteJSON is text as a JSON string, as encoding/json writes it with or
// without HTML escaping.
func quoteJSON(text string, html bool) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(text) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'})
}

// OutputText is the text a stored response's object is compacted against:
// the content of its first output item.
func OutputText(output []Item) string {
	for _, it := range output {
		if it.Output {
			return it.Message.Content
		}
	}
	return ""
}
