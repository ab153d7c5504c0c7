package runner

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/runedge/runedge/internal/jsonfast"
	"github.com/runedge/runedge/internal/pendingtest"
)

// pendingLiterals are client texts as JSON string literals with every
// class of escape: short escapes, \u0000 and the other control bytes,
// \/ and upper-case hex, HTML characters raw and escaped, the JavaScript
// line separators raw and escaped, surrogate pairs, non-ASCII raw and
// escaped, and the compaction prompt with an escape in it. Each is kept
// pending (jsonfast.PendingLiteral).
var pendingLiterals = []string{
	`"quotes \" and backslashes \\ and a slash \/"`,
	`"controls \b\f\n\r\t \u0000 \u0001 \u001f \u007F"`,
	`"separators \u2028 \u2029 and raw ` + "\u2028\u2029" + ` \n"`,
	`"html <b>&amp;</b> \u003c\u003e\u0026"`,
	`"pairs \ud83d\ude00 and ` + "\U0001F600" + ` and \uD83D\uDE00"`,
	`"non-ASCII é 漢字 \u00e9\u6f22"`,
	`"marshaled:\n\tline \"two\""`,
	`"` + strings.Replace(CompactionPrompt, "S", `\u0053`, 1) + `"`,
	`"Summary of the earlier conversation: \"it\"\n"`,
}

// notPendingLiterals are literals that are never kept pending: no escape
// (read in place), or not read alike by every reader (a lone surrogate,
// a byte that is not UTF-8: encoding/json reads U+FFFD).
var notPendingLiterals = []string{`"plain"`, `"lone \ud800"`, `"lone \udc00 \ud83d\u0041"`, "\"bytes \xff\\n\""}

// pendingMessages returns each literal of pendingLiterals as a pending
// message and as the same message decoded by encoding/json.
func pendingMessages(t *testing.T) (pending, decoded []Message) {
	t.Helper()
	for i, lit := range pendingLiterals {
		role := [...]string{"user", "assistant", "system"}[i%3]
		if strings.Contains(lit, "ummarise the conversation") {
			role = "user"
		}
		if strings.HasPrefix(lit, `"Summary`) {
			role = "system"
		}
		p, d := pendingtest.Message(t, role, lit)
		pending, decoded = append(pending, p), append(decoded, d)
	}
	return pending, decoded
}

// TestPendingTextsReadAsDecoded reads each pending text through every
// reader of a message's text that a run of the openai provider uses
// (Text, TextLen, DecodeTexts, the recorded request by hand and through
// encoding/json, the byte budget, the compaction prompt and summary),
// and holds each to the text encoding/json reads from the client's
// literal. It fails when a pending text's escaped bytes are read as its
// text anywhere.
func TestPendingTextsReadAsDecoded(t *testing.T) {
	for _, lit := range notPendingLiterals {
		if _, _, ok := jsonfast.PendingLiteral(jsonfast.Value(lit)); ok {
			t.Errorf("%q is kept pending", lit)
		}
	}
	pending, decoded := pendingMessages(t)
	for i := range pending {
		p, d := pending[i], decoded[i]
		if !p.ContentPending() {
			t.Fatalf("%s: not pending", pendingLiterals[i])
		}
		if p.Text() != d.Content || p.TextLen() != len(d.Content) {
			t.Errorf("%s: Text %q (%d bytes), want %q (%d)", pendingLiterals[i], p.Text(), p.TextLen(), d.Content, len(d.Content))
		}
		if lit, ok := p.ContentJSON(); !ok || lit != pendingLiterals[i] {
			t.Errorf("%s: ContentJSON %q %v", pendingLiterals[i], lit, ok)
		}
		if messageBytes(p) != messageBytes(d) {
			t.Errorf("%s: messageBytes %d, want %d", pendingLiterals[i], messageBytes(p), messageBytes(d))
		}
		if IsCompactionPrompt(p) != IsCompactionPrompt(d) {
			t.Errorf("%s: IsCompactionPrompt %v, want %v", pendingLiterals[i], IsCompactionPrompt(p), IsCompactionPrompt(d))
		}
		ps, pok := CompactedSummary(p)
		ds, dok := CompactedSummary(d)
		if ps != ds || pok != dok {
			t.Errorf("%s: CompactedSummary %q %v, want %q %v", pendingLiterals[i], ps, pok, ds, dok)
		}
		// A stage that sets a text gives the message that text.
		q := p
		q.Content = "rewritten"
		if q.ContentPending() || q.Text() != "rewritten" || q.TextLen() != len("rewritten") {
			t.Errorf("%s: a rewritten text reads %q", pendingLiterals[i], q.Text())
		}
		if _, ok := q.ContentJSON(); ok {
			t.Errorf("%s: a rewritten text keeps its literal", pendingLiterals[i])
		}
	}
	if !IsCompactionPrompt(pending[7]) {
		t.Error("the compaction prompt with an escape is not recognised")
	}

	// The recorded request: by hand, and through encoding/json (a tool
	// sends it there), both as json.Marshal writes the decoded request.
	for _, r := range []Request{{Stream: true}, {Tools: []Tool{{Name: "f"}}}} {
		r.Input = append([]Message(nil), pending...)
		w := r
		w.Input = decoded
		want, _ := json.Marshal(&w)
		got, _, err := recordedInto(&r, true, false)
		if err != nil || string(got) != string(want) {
			t.Errorf("recorded %s, %v\nwant %s", got, err, want)
		}
		for i := range r.Input {
			if !r.Input[i].ContentPending() {
				t.Errorf("recording decoded the run's message %d", i)
			}
		}
	}

	// Decoded in place: the same texts, the literals kept for the writers
	// that copy them.
	msgs := append([]Message(nil), pending...)
	DecodeTexts(msgs)
	for i, m := range msgs {
		lit, ok := m.ContentJSON()
		if m.ContentPending() || m.Content != decoded[i].Content || !ok || lit != pendingLiterals[i] {
			t.Errorf("%s: decoded %q (pending %v), literal %q %v", pendingLiterals[i], m.Content, m.ContentPending(), lit, ok)
		}
		pm, pok := pending[i].ContentMarshaled()
		mm, mok := m.ContentMarshaled()
		if pm != mm || pok != mok {
			t.Errorf("%s: marshaled literal %q %v once decoded, %q %v pending", pendingLiterals[i], mm, mok, pm, pok)
		}
		var one Message = pending[i]
		one.DecodeContent()
		if one.Content != decoded[i].Content || one.ContentPending() {
			t.Errorf("%s: DecodeContent %q", pendingLiterals[i], one.Content)
		}
	}
}
