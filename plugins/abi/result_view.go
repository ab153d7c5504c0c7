package abi

import (
	"bytes"
	"strconv"

	"github.com/runedge/runedge/plugins/guestjson"
)

// View returns the input as ViewResultInput reads it from AppendJSON's
// output, without the object around the fields: each value is encoded by
// the same code AppendJSON uses, into buf (reused when it has room), and
// the view's fields alias the returned buffer. A mapping that runs in the
// host (the built-in default, runtime.NativeHooks.MapResultView) takes
// this view directly, so the envelope is neither written whole nor parsed
// back: that walk was about a third of a native map_result
// (RATIONALE.md "The native default without the envelope").
// TestViewIsTheParsedEnvelope holds the two forms equal.
func (in *ResultInput) View(buf []byte) (ResultView, []byte) {
	w := viewWriter{buf: buf[:0]}
	if need := in.viewSize(); cap(w.buf) < need {
		w.buf = make([]byte, 0, need) // one allocation, unless escapes are many
	}
	w.str(fEndpoint, in.Endpoint)
	w.str(fID, in.ID)
	w.str(fMessageID, in.MessageID)
	w.num(fCreated, in.Created)
	if in.Completed > 0 {
		w.num(fCompleted, in.Completed)
	}
	w.str(fSessionID, in.SessionID)
	w.str(fRunID, in.RunID)
	w.str(fModel, in.Model)
	w.str(fStatus, in.Status)
	w.str(fText, in.Result.Text)
	w.str(fFinishReason, in.Result.FinishReason)
	if len(in.Result.ToolCalls) > 0 {
		a := len(w.buf)
		w.buf = appendToolCallArray(w.buf, in.Result.ToolCalls)
		w.at[fToolCalls] = span{a, len(w.buf)}
	}
	if in.Result.Reasoning != "" {
		w.str(fReasoning, in.Result.Reasoning)
	}
	a := len(w.buf)
	w.buf = appendUsage(w.buf, in.Status, in.Result)
	w.at[fUsage] = span{a, len(w.buf)}
	a = len(w.buf)
	if echo := bytes.TrimSpace(in.Echo); len(echo) == 0 {
		w.buf = append(w.buf, "{}"...)
	} else {
		w.buf = append(w.buf, echo...)
	}
	w.at[fEcho] = span{a, len(w.buf)}

	// Slice only now: the buffer may have moved while it grew.
	return ResultView{
		Endpoint: w.value(fEndpoint), ID: w.value(fID), MessageID: w.value(fMessageID), Created: w.value(fCreated),
		Model: w.value(fModel), Status: w.value(fStatus), SessionID: w.value(fSessionID), RunID: w.value(fRunID),
		Completed: w.value(fCompleted), Text: w.value(fText), FinishReason: w.value(fFinishReason),
		Usage: w.value(fUsage), Echo: w.value(fEcho), ToolCalls: w.value(fToolCalls), Reasoning: w.value(fReasoning),
	}, w.buf
}

// viewSize is View's buffer for in when no string needs escapes beyond
// one in two bytes of text: the ids and names as they are plus their
// quotes, text and reasoning twice, the tool calls with their keys, the
// echo, and 160 bytes for the numbers and the usage object. A fixed guess
// (256 bytes) was short for a chat reply's ids alone, and the buffer was
// copied again to fit the echo: 576 bytes more per reply.
func (in *ResultInput) viewSize() int {
	n := 160 + len(in.Endpoint) + len(in.ID) + len(in.MessageID) + len(in.SessionID) + len(in.RunID) +
		len(in.Model) + len(in.Status) + len(in.Result.FinishReason) + 2*len(in.Result.Text) +
		2*len(in.Result.Reasoning) + len(in.Echo)
	for _, c := range in.Result.ToolCalls {
		n += 40 + len(c.ID) + len(c.Name) + 2*len(c.Arguments)
	}
	return n
}

// viewWriter encodes View's fields into one buffer, noting where each is.
type viewWriter struct {
	buf []byte
	at  [fieldCount]span
}

func (w *viewWriter) str(f int, s string) {
	a := len(w.buf)
	w.buf = guestjson.AppendString(w.buf, s)
	w.at[f] = span{a, len(w.buf)}
}

func (w *viewWriter) num(f int, n int64) {
	a := len(w.buf)
	w.buf = strconv.AppendInt(w.buf, n, 10)
	w.at[f] = span{a, len(w.buf)}
}

func (w *viewWriter) value(f int) guestjson.Value {
	return guestjson.Value(guestjson.View(w.buf[w.at[f].a:w.at[f].b]))
}

// span is where one field's value lies in View's buffer; the zero span
// is an absent field ("").
type span struct{ a, b int }

// The fields of a ResultView, as View records them.
const (
	fEndpoint = iota
	fID
	fMessageID
	fCreated
	fCompleted
	fSessionID
	fRunID
	fModel
	fStatus
	fText
	fFinishReason
	fToolCalls
	fReasoning
	fUsage
	fEcho
	fieldCount
)
