package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

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

// ResponseLink is what continuing a stored response needs of it: the run
// of its own previous_response_id ("" for a first turn) and its run's
// session and thread.
type ResponseLink struct {
	PreviousRunID, SessionID, ThreadID string
}

// ResponseLinker is implemented by a HistoryStore that reads a
// ResponseLink in one lookup of two rows. Without it a turn reads the
// response's record (GetResponse, which rebuilds its final object) and
// its run (GetRun, which rebuilds its recorded request): about a fifth of
// a previous_response_id turn's CPU for three ids.
type ResponseLinker interface {
	// ResponseLink returns the link of runID, a stored, undeleted
	// response of tenant whose run is the tenant's; ErrNotFound when it
	// is not one.
	ResponseLink(ctx context.Context, tenantID, runID string) (ResponseLink, error)
}

// responseLink is ResponseLinker's lookup, or GetResponse's and GetRun's.
func (s *Service) responseLink(ctx context.Context, tenantID, runID string) (ResponseLink, error) {
	if s.linker != nil {
		return s.linker.ResponseLink(ctx, tenantID, runID)
	}
	rec, err := s.history.GetResponse(ctx, tenantID, runID)
	if err != nil {
		return ResponseLink{}, err
	}
	prev, err := s.store.GetRun(ctx, tenantID, runID)
	if err != nil {
		return ResponseLink{}, err
	}
	if prev.TenantID != tenantID {
		return ResponseLink{}, ErrNotFound
	}
	return ResponseLink{PreviousRunID: rec.PreviousRunID, SessionID: prev.SessionID, ThreadID: prev.ThreadID}, nil
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
	link, err := s.responseLink(ctx, spec.TenantID, prevRun)
	if errors.Is(err, ErrNotFound) {
		return nil, "", fmt.Errorf("%w: %q", ErrPreviousResponseNotFound, req.PreviousResponseID)
	} else if err != nil {
		return nil, "", err // the store failed: not the client's mistake
	}
	rec := ResponseRecord{RunID: prevRun, TenantID: spec.TenantID, PreviousRunID: link.PreviousRunID}
	if spec.SessionID == "" && spec.ThreadID == "" {
		spec.SessionID, spec.ThreadID = link.SessionID, link.ThreadID
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
// content part and output_text), and the output item holds it too; it
// repeats the request's settings that the response's echo, in the same
// row, holds too (instructions and tools among them, often kilobytes), and
// the run's id in each id it names (resp_X, msg_X, run_X, sess_X). A store
// keeps the object compact: a header byte, then the object with each
// occurrence of the text's JSON string replaced by one marker byte, each
// top-level member that is one of the echo (`"key":value`, as the echo
// writes it) by a marker byte and the member's index, and each occurrence
// of the run id's X by a marker byte; it is rebuilt from the output item,
// the echo and the run id on read. Header and markers
// are control bytes, which JSON never holds raw, so a stored object is
// compact exactly when it begins with the header. Two escapings of the
// text are recognised: Go's default (HTML characters as \u003c…) and the
// plain one.
const (
	compactHeader = '\x01'
	markPlain     = '\x02'
	markHTML      = '\x03'
	// markEcho is followed by echoIndex plus the member's index.
	markEcho  = '\x04'
	echoIndex = 0x20
	markID    = '\x05'
	// idAbove: a shorter run id is left in.
	idAbove = 8
	// echoMembers: members past it are not referenced (the index byte
	// stays printable ASCII).
	echoMembers = 0x7f - echoIndex
	// compactAbove: shorter texts are not worth the work.
	compactAbove = 64
	// echoAbove: a shorter member costs its marker as much.
	echoAbove = 4
)

// CompactObject returns the stored form of the final Response object of
// run runID whose output text is text and whose response's echo is echo:
// compact when the object holds the text's JSON string, a top-level member
// of the echo among its own or the run's id, else object unchanged (also
// when the object is not a JSON object). The text is left in when it is
// short or not valid UTF-8, which JSON would not keep as is.
// ExpandObject(CompactObject(o, r, t, e), r, t, e) == o for every JSON o.
func CompactObject(object []byte, runID, text string, echo []byte) []byte {
	if len(object) == 0 || object[0] != '{' || bytes.ContainsAny(object, "\x01\x02\x03\x04\x05") {
		return object
	}
	// The spans of object to replace, each with its marker, taken in
	// order, the first of overlapping ones winning: each marker stands
	// for exactly the bytes it replaced.
	type span struct {
		at, n int
		mark  [2]byte // mark[1] == 0: one byte
	}
	spans := make([]span, 0, 16)
	if len(text) >= compactAbove && utf8.ValidString(text) {
		for _, mark := range []byte{markPlain, markHTML} {
			q := quoteJSON(text, mark == markHTML)
			for off := 0; ; {
				i := bytes.Index(object[off:], q)
				if i < 0 {
					break
				}
				spans = append(spans, span{off + i, len(q), [2]byte{mark}})
				off += i + len(q)
			}
			if len(spans) > 0 {
				break
			}
		}
	}
	if id := idOf(runID); len(id) >= idAbove {
		for off := 0; ; {
			i := bytes.Index(object[off:], []byte(id))
			if i < 0 {
				break
			}
			spans = append(spans, span{off + i, len(id), [2]byte{markID}})
			off += i + len(id)
		}
	}
	if ms := membersOf(echo); len(ms) > 0 {
		gjson.ParseBytes(object).ForEach(func(k, v gjson.Result) bool {
			at, end := k.Index, v.Index+len(v.Raw)
			if k.Index <= 0 || v.Index <= at || end > len(object) {
				return true // no position known: left as is
			}
			if i := ms.index(object[at:end]); i >= 0 {
				spans = append(spans, span{at, end - at, [2]byte{markEcho, byte(echoIndex + i)}})
			}
			return true
		})
	}
	if len(spans) == 0 {
		return object
	}
	slices.SortFunc(spans, func(a, b span) int { return a.at - b.at })
	out := make([]byte, 1, len(object)+1)
	out[0] = compactHeader
	next := 0
	for _, sp := range spans {
		if sp.at < next {
			continue // overlaps the one taken before
		}
		out = append(out, object[next:sp.at]...)
		if sp.mark[1] == 0 {
			out = append(out, sp.mark[0])
		} else {
			out = append(out, sp.mark[:]...)
		}
		next = sp.at + sp.n
	}
	return append(out, object[next:]...)
}

// idOf is what a run's id adds to its prefix (the X of run_X), which the
// ids of its response, output message and session repeat.
func idOf(runID string) string { return strings.TrimPrefix(runID, contract.RunPrefix) }

// members are the top-level members of an echo, each `"key":value` (the
// key and the value as the echo writes them, nothing between them).
type members []struct{ key, value string }

// membersOf are echo's members, at most echoMembers of them; none when
// echo is not a JSON object.
func membersOf(echo []byte) members {
	if len(echo) == 0 {
		return nil
	}
	v := gjson.ParseBytes(echo)
	if !v.IsObject() {
		return nil
	}
	ms := make(members, 0, 16)
	v.ForEach(func(k, v gjson.Result) bool {
		ms = append(ms, struct{ key, value string }{k.Raw, v.Raw})
		return len(ms) < echoMembers
	})
	return ms
}

// index is the index of the member that is m, byte for byte, -1 for none;
// members shorter than echoAbove are not looked for.
func (ms members) index(m []byte) int {
	for i, e := range ms {
		if n := len(e.key) + 1 + len(e.value); n == len(m) && n >= echoAbove &&
			string(m[:len(e.key)]) == e.key && m[len(e.key)] == ':' && string(m[len(e.key)+1:]) == e.value {
			return i
		}
	}
	return -1
}

// IsCompact reports whether a stored object needs ExpandObject.
func IsCompact(stored []byte) bool { return len(stored) > 0 && stored[0] == compactHeader }

// NeedsText reports whether a compact object needs its output text back
// (it was compacted against it), and so its output item.
func NeedsText(stored []byte) bool {
	return IsCompact(stored) && bytes.ContainsAny(stored, "\x02\x03")
}

// ExpandObject rebuilds the object CompactObject stored, given the same
// run id, text and echo; any other stored object is returned as is.
func ExpandObject(stored []byte, runID, text string, echo []byte) []byte {
	if !IsCompact(stored) {
		return stored
	}
	stored = stored[1:]
	out := make([]byte, 0, len(stored)+2*len(text)+len(echo)+4*len(runID)+64)
	var q [2][]byte
	var ms members
	for {
		i := bytes.IndexAny(stored, "\x02\x03\x04\x05")
		if i < 0 {
			return append(out, stored...)
		}
		out = append(out, stored[:i]...)
		if stored[i] == markID {
			out = append(out, idOf(runID)...)
			stored = stored[i+1:]
			continue
		}
		if stored[i] == markEcho {
			if ms == nil {
				ms = membersOf(echo)
			}
			if i+1 < len(stored) {
				if k := int(stored[i+1]) - echoIndex; k >= 0 && k < len(ms) {
					out = append(append(append(out, ms[k].key...), ':'), ms[k].value...)
				}
			}
			stored = stored[min(i+2, len(stored)):]
			continue
		}
		k := int(stored[i] - markPlain)
		if q[k] == nil {
			q[k] = quoteJSON(text, stored[i] == markHTML)
		}
		out = append(out, q[k]...)
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
