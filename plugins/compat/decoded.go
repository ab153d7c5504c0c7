//go:build !wasip1

package compat

import (
	"strings"
	"unicode/utf8"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/internal/jsonfast"
	"github.com/runedge/runedge/plugins/abi"
	nativewire "github.com/runedge/runedge/runner/native"
)

// MapRequestDecoded is MapRequestView followed by the host's decoding of
// its output (abi.DecodeNativeRequestOutput), for the host that runs this
// package natively, without the output's input messages written as JSON
// and read back: each message's text is read from the client's body
// directly. It takes the shape an agent resends every turn: a chat
// completion whose messages are all text (a role other than tool, a
// string content, no tool calls), or a Responses request whose input is
// a list of message items with a string content and no phase; for any
// other body, and for any body MapRequestView would refuse, ok is false
// and the caller maps it through MapRequestView, so that every error
// comes from one place. Where ok is true the request is the one the two
// steps give, message for message with the same literals
// (FuzzMapRequestDecoded). The request's strings share the body's memory.
func MapRequestDecoded(ri abi.RequestView) (o abi.RequestOutput, ok bool) {
	if !ri.Body.IsObject() {
		return o, false
	}
	var messages value
	var out []byte
	switch {
	case ri.Endpoint.Is(EndpointChat):
		b, n, includeUsage, err := readChatBody(ri.Body, ri.StringEnds)
		if err != nil {
			return o, false
		}
		messages = b.messages
		out = appendChatRest(placeholder(len(n.format.schema)), &n, includeUsage)
	case ri.Endpoint.Is(EndpointResponses):
		var b responsesBody
		n, err := readResponsesBody(ri.Body, &b, ri.StringEnds)
		if err != nil || !b.input.IsArray() {
			return o, false
		}
		messages = b.input
		out = appendResponsesRest(placeholder(len(n.format.schema)+len(b.text)+len(b.echoed[contract.EchoTools])), &b, &n)
	default:
		return o, false
	}
	// Room for a message every 512 bytes of the list: never more than
	// the list holds when its messages are that long or longer, as an
	// agent's are, and one allocation then where growing by doubling
	// from one allocated and copied nearly twice the array.
	input := make([]nativewire.Message, 0, len(messages)/512+1)
	chat := ri.Endpoint.Is(EndpointChat)
	var texts jsonfast.Arena // the unescaped texts, a few chunks for all
	var f textFields
	messages.ObjectElementsEnds(ri.StringEnds, f.member, func(m value) bool {
		if len(input) < cap(input) {
			// The array's room is zero already (make, or append's
			// growth): appending a zero Message wrote its pointer
			// words again, through the collector's barrier while it
			// marks (runtime.wbZero, half of this loop's samples).
			input = input[:len(input)+1]
		} else {
			input = append(input, nativewire.Message{})
		}
		ok = f.decode(m, chat, ri.PlainStrings, &input[len(input)-1], &texts)
		f = textFields{}
		return ok
	})
	if !ok || len(input) == 0 {
		return o, false
	}
	// The options as MapRequestView writes them, decoded by the same
	// reader, around one placeholder message that the texts replace.
	o, err := abi.DecodeNativeRequestOutput(out)
	if err != nil || len(o.Request.Input) != 1 {
		return abi.RequestOutput{}, false
	}
	if _, fast := o.Request.Input[0].ContentJSON(); !fast {
		// The decoder read this request with encoding/json (tools, a
		// schema), which keeps no literal: nor do the texts then, a
		// pending one decoded first.
		for i := range input {
			if m := &input[i]; m.ContentPending() {
				lit, _ := m.ContentJSON()
				var text string
				if _, _, ok := jsonfast.StringLiteralMarshaledIn(jsonfast.Value(lit), &text, &texts); !ok {
					return abi.RequestOutput{}, false
				}
				m.SetDecodedContent(text)
			}
			input[i].SetContentJSON("")
		}
	}
	o.Request.Input = input
	return o, true
}

// placeholder starts a map_request output whose input is one empty
// message, with room for n bytes of options.
func placeholder(n int) []byte {
	out := make([]byte, 0, 128+n)
	return append(out, `{"request":{"input":[{"role":"user","content":""}`...)
}

// textFields are the members of a message that decode reads, the last
// of each as Members gives them (member).
type textFields struct{ typ, role, content, toolCalls, phase value }

func (f *textFields) member(k, v value) {
	// A key as written, when it is one of these: one comparison of its
	// bytes where each k.Is below reads it again (a fifth of
	// MapRequestDecoded's instructions on an agent's history). A key
	// with no backslash is its text, so no other key is one of them.
	switch k.Escaped() {
	case "role":
		f.role = v
		return
	case "content":
		f.content = v
		return
	case "tool_calls":
		f.toolCalls = v
		return
	case "type":
		f.typ = v
		return
	case "phase":
		f.phase = v
		return
	}
	if strings.IndexByte(k.Escaped(), '\\') < 0 {
		return
	}
	switch {
	case k.Is("role"):
		f.role = v
	case k.Is("content"):
		f.content = v
	case k.Is("tool_calls"):
		f.toolCalls = v
	case k.Is("type"):
		f.typ = v
	case k.Is("phase"):
		f.phase = v
	}
}

// decode reads message m, whose members f holds, into msg when it is
// text only, as appendChatMessage (chat) or appendInputItem writes it and
// the host's decoder reads it back: the role as a constant, the content
// with its literal when every reader reads that as the text. It reports
// false for anything else. A text with an escape is kept pending when
// every reader reads it alike (found by reading it, or known when plain:
// every string of the body is, abi.RequestView.PlainStrings), unescaped
// into texts otherwise.
func (f *textFields) decode(m value, chat, plain bool, msg *nativewire.Message, texts *jsonfast.Arena) bool {
	if !m.IsObject() {
		return false
	}
	typ, role, content, toolCalls, phase := f.typ, f.role, f.content, f.toolCalls, f.phase
	var r string
	var ok bool
	if chat {
		r, ok = chatRole(role)
		ok = ok && r != "tool" && (toolCalls.IsNull() || toolCalls == "[]")
	} else {
		r, ok = responsesRole(role)
		ok = ok && (typ.IsNull() || typ.Is("message")) && phase.IsNull()
	}
	if !ok || !content.IsString() {
		return false
	}
	pending := jsonfast.PendingLiteral
	if plain {
		// The model stage found every string of the body plain: no need
		// to read this one to know its text's length and form.
		pending = jsonfast.PlainPendingLiteral
	}
	if n, marshaled, ok := pending(jsonfast.Value(content)); ok {
		// A text with an escape that every reader reads alike stays
		// escaped until something reads it: the upstream body and the
		// recorded request copy its literal (RATIONALE.md "Agent-sized
		// bodies").
		msg.Role = r
		msg.SetContentPending(string(content), n, marshaled)
		return true
	}
	lit, marshaled, ok := jsonfast.StringLiteralMarshaledIn(jsonfast.Value(content), &msg.Content, texts)
	if !ok {
		return false
	}
	if lit == "" && !utf8.ValidString(content.Escaped()) {
		// The JSON path writes such a text escaped afresh, bytes that
		// are not UTF-8 as \ufffd, and that literal reaches the upstream:
		// left to it.
		return false
	}
	msg.Role = r
	msg.SetContentJSONMarshaled(lit, marshaled)
	return true
}
