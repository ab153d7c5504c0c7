package runner

import (
	"github.com/runedge/runedge/internal/jsonfast"
)

// PendingTextAgent is implemented by an agent that reads every message's
// text through Message.Text, TextLen or its literal (ContentJSON), so
// that it may be given messages whose texts are still pending
// (Message.SetContentPending: the client's literal, not unescaped). The
// service decodes every pending text before a run of any other agent
// (DecodeTexts), and before a run it stores the input of. The reference
// agent says so for a provider that does (PendingTextProvider).
type PendingTextAgent interface {
	Agent
	TakesPendingTexts() bool
}

// PendingTextProvider is PendingTextAgent's provider side: Generate and
// Prepare read each text through Message.Text, TextLen or ContentJSON.
type PendingTextProvider interface {
	Provider
	TakesPendingTexts() bool
}

// DecodeTexts puts every pending text of msgs in its Content, the texts
// unescaped into a few shared chunks (jsonfast.Arena), in place: the
// same texts, read as the client wrote them.
func DecodeTexts(msgs []Message) {
	var texts jsonfast.Arena
	for i := range msgs {
		m := &msgs[i]
		if !m.ContentPending() {
			continue
		}
		lit, _ := m.ContentJSON()
		var s string
		if _, _, ok := jsonfast.StringLiteralMarshaledIn(jsonfast.Value(lit), &s, &texts); !ok {
			s = m.Text()
		}
		m.SetDecodedContent(s)
	}
}

// takesPendingTexts reports whether agent a may be given pending texts.
func takesPendingTexts(a Agent) bool {
	p, ok := a.(PendingTextAgent)
	return ok && p.TakesPendingTexts()
}

// hasPending reports whether a text of msgs is pending.
func hasPending(msgs []Message) bool {
	for i := range msgs {
		if msgs[i].ContentPending() {
			return true
		}
	}
	return false
}

// textOf is m.Text(), a pending text unescaped by jsonfast (encoding/json
// reads it the same, FuzzString, at several times the cost).
func textOf(m *Message) string {
	if !m.ContentPending() {
		return m.Content
	}
	lit, _ := m.ContentJSON()
	var s string
	if jsonfast.String(jsonfast.Value(lit), &s) {
		return s
	}
	return m.Text()
}
