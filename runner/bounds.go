package runner

import (
	"errors"
	"fmt"
)

// What one request may make the history do (README.md "Responses that
// remember"): item references and previous_response_id turn a few bytes of
// request into stored messages of any size, so each has a bound that ends
// in a 400 naming the field, and nothing is read or copied past it.

// HistoryBounds bound what a responses request may resolve from the
// history. A zero field takes its default (DefaultHistoryBounds).
type HistoryBounds struct {
	// MaxReferences bounds the item_reference items of one request.
	MaxReferences int
	// MaxReferenceBytes bounds the messages item references resolve to,
	// each occurrence counted (ten references to one item count it ten
	// times: the agent's input holds it ten times).
	MaxReferenceBytes int
	// MaxHistoryBytes bounds the turns previous_response_id replays,
	// references in them resolved and counted.
	MaxHistoryBytes int
	// MaxStoredEvents bounds the stream events kept of one background
	// response (EventLog): past it, text and argument deltas are neither
	// kept nor stored; every other event is, so a resumed stream still
	// ends with the done events, which carry the whole text.
	MaxStoredEvents int
}

// Defaults of HistoryBounds.
const (
	DefaultMaxReferences     = 256
	DefaultMaxReferenceBytes = 4 << 20
	DefaultMaxHistoryBytes   = 8 << 20
	DefaultMaxStoredEvents   = 20000
)

// withDefaults fills the zero fields.
func (b HistoryBounds) withDefaults() HistoryBounds {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&b.MaxReferences, DefaultMaxReferences)
	def(&b.MaxReferenceBytes, DefaultMaxReferenceBytes)
	def(&b.MaxHistoryBytes, DefaultMaxHistoryBytes)
	def(&b.MaxStoredEvents, DefaultMaxStoredEvents)
	return b
}

// ErrHistoryTooLarge: what a request would resolve from the history is
// beyond a bound (HistoryBounds). It matches ErrInvalidRequest; the error
// is a *BoundError when the runner knows which field.
var ErrHistoryTooLarge = fmt.Errorf("%w: beyond the history bounds", ErrInvalidRequest)

// BoundError names the request field whose resolution passed a bound.
type BoundError struct {
	Param string // "input", "input[3]", "previous_response_id"
	Msg   string
}

func (e *BoundError) Error() string { return e.Param + ": " + e.Msg }

// Is makes errors.Is(err, ErrHistoryTooLarge) (and so ErrInvalidRequest)
// hold.
func (e *BoundError) Is(target error) bool {
	return target == ErrHistoryTooLarge || target == ErrInvalidRequest
}

// ByteBudget counts bytes against a bound; stores use it to stop reading a
// conversation as soon as it is too large.
type ByteBudget struct{ used int }

// Spend adds n bytes and fails with ErrHistoryTooLarge once the total
// passes limit (0 or less: no bound).
func (b *ByteBudget) Spend(n, limit int) error {
	b.used += n
	if limit > 0 && b.used > limit {
		return fmt.Errorf("%w: more than %d bytes", ErrHistoryTooLarge, limit)
	}
	return nil
}

// Used is what was spent so far.
func (b *ByteBudget) Used() int { return b.used }

// messageBytes is what a message costs against a byte budget: its text,
// its calls and their arguments, its parts (an image's data URL counts
// whole) and a replayed reasoning item.
func messageBytes(m Message) int {
	n := len(m.Role) + m.TextLen() + len(m.ToolCallID) + len(m.Phase)
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	for _, p := range m.Parts {
		n += len(p.Text) + len(p.URL) + len(p.Data) + len(p.Filename) + len(p.Detail) + len(p.Format)
	}
	if r := m.Reasoning; r != nil {
		n += len(r.EncryptedContent) + len(r.Opened)
		for _, s := range r.Summary {
			n += len(s)
		}
		for _, s := range r.Content {
			n += len(s)
		}
	}
	return n
}

// historyBoundError names previous_response_id for a replay beyond the
// bound, whatever the store said.
func historyBoundError(err error, limit int) error {
	if errors.Is(err, ErrHistoryTooLarge) {
		return &BoundError{Param: "previous_response_id",
			Msg: fmt.Sprintf("the responses this continues hold more than %d bytes (limits.history.max_history_bytes)", limit)}
	}
	return err
}
