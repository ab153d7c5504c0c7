// Package respjson writes the Responses items and Response objects runedge
// builds itself, so that an item has one shape wherever it appears: in the
// final Response of the default mapping (plugins/compat, also built to
// WebAssembly), in the host's stream frames (filters/framing,
// filters/translate), in the items the Conversations and input_items
// endpoints list (host/api, filters/conversation), in compaction replies
// (filters/compaction, filters/translate) and in the socket's pre-warm
// Response (host/server/internal/socket). Every item kind it writes is held
// to the Open Responses description and to OpenAI's OpenAPI description at
// once (items_test.go).
//
// Each Append… appends to dst and allocates nothing beyond dst's growth.
// Text is escaped by plugins/guestjson, the one JSON string writer of the
// host and the guests. Standard library and guestjson only: the package is
// compiled into the default plugin.
package respjson

import (
	"github.com/runedge/runedge/plugins/guestjson"
)

// The fragments of an assistant output message, for writers that hold the
// id and text as JSON already (the default mapping copies them from its
// input without decoding) or write the message in pieces (a stream). A
// whole message is
//
//	ItemHead + id + MessageCompleted + text + MessageTail
//
// (MessageIncomplete for a message cut short), and the message of
// response.output_item.added is ItemHead + id + MessageInProgress.
const (
	ItemHead          = `{"id":`
	MessageCompleted  = `,"type":"message","status":"completed","role":"assistant","content":[` + OutputTextHead
	MessageIncomplete = `,"type":"message","status":"incomplete","role":"assistant","content":[` + OutputTextHead
	MessageInProgress = `,"type":"message","status":"in_progress","role":"assistant","content":[]}`
	// MessageTail closes the message's one output_text part and the
	// message.
	MessageTail = OutputTextTail + `]}`
	// An output_text part is OutputTextHead + text + OutputTextTail.
	OutputTextHead = `{"type":"output_text","text":`
	OutputTextTail = `,"annotations":[],"logprobs":[]}`
)

// Item statuses.
const (
	StatusCompleted  = "completed"
	StatusIncomplete = "incomplete"
	StatusInProgress = "in_progress"
)

// AppendOutputMessage appends an assistant message with one output_text
// part holding text; status is StatusCompleted or StatusIncomplete.
func AppendOutputMessage(dst []byte, id, status, text string) []byte {
	dst = append(dst, ItemHead...)
	dst = guestjson.AppendString(dst, id)
	if status == StatusIncomplete {
		dst = append(dst, MessageIncomplete...)
	} else {
		dst = append(dst, MessageCompleted...)
	}
	dst = guestjson.AppendString(dst, text)
	return append(dst, MessageTail...)
}

// Part kinds of a message's content.
const (
	PartText  = ""
	PartImage = "image"
	PartFile  = "file"
	PartAudio = "audio"
)

// Part is one content part of a listed message: text (an assistant's is
// output_text, anyone else's input_text), an image, a file or audio, as
// the client sent it.
type Part struct {
	Kind string // PartText, PartImage, PartFile or PartAudio
	Text string
	// URL is an image's image_url or a file's file_url; Detail an image's
	// detail ("auto" when empty).
	URL, Detail string
	// Data is a file's file_data or audio's data; Filename a file's name;
	// Format audio's format.
	Data, Filename, Format string
}

// Message is a message item as a listing shows it.
type Message struct {
	ID, Role string
	// Status is the item's status, StatusCompleted when empty.
	Status string
	// Phase is an assistant message's phase, left out when empty.
	Phase string
	Parts []Part
}

// AppendMessage appends m: id, type, status, role, phase when set, then
// its content parts.
func AppendMessage(dst []byte, m Message) []byte {
	dst = append(dst, ItemHead...)
	dst = guestjson.AppendString(dst, m.ID)
	dst = append(dst, `,"type":"message","status":`...)
	status := m.Status
	if status == "" {
		status = StatusCompleted
	}
	dst = guestjson.AppendString(dst, status)
	dst = append(dst, `,"role":`...)
	dst = guestjson.AppendString(dst, m.Role)
	if m.Phase != "" {
		dst = append(dst, `,"phase":`...)
		dst = guestjson.AppendString(dst, m.Phase)
	}
	dst = append(dst, `,"content":[`...)
	for i, p := range m.Parts {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendPart(dst, m.Role, p)
	}
	return append(dst, "]}"...)
}

// AppendPart appends content part p of a message of role.
func AppendPart(dst []byte, role string, p Part) []byte {
	switch p.Kind {
	case PartImage:
		dst = append(dst, `{"type":"input_image","image_url":`...)
		if p.URL == "" {
			dst = append(dst, "null"...) // an image the client named otherwise
		} else {
			dst = guestjson.AppendString(dst, p.URL)
		}
		d := p.Detail
		if d == "" {
			d = "auto"
		}
		dst = append(dst, `,"detail":`...)
		dst = guestjson.AppendString(dst, d)
		return append(dst, '}')
	case PartFile:
		dst = append(dst, `{"type":"input_file"`...)
		for _, f := range [...]struct{ key, v string }{{`,"file_data":`, p.Data}, {`,"file_url":`, p.URL}, {`,"filename":`, p.Filename}} {
			if f.v != "" {
				dst = append(dst, f.key...)
				dst = guestjson.AppendString(dst, f.v)
			}
		}
		return append(dst, '}')
	case PartAudio:
		dst = append(dst, `{"type":"input_audio","input_audio":{"data":`...)
		dst = guestjson.AppendString(dst, p.Data)
		dst = append(dst, `,"format":`...)
		dst = guestjson.AppendString(dst, p.Format)
		return append(dst, "}}"...)
	}
	return AppendTextPart(dst, role, p.Text)
}

// AppendTextPart appends a text part of a message of role: output_text
// (with its empty annotations and logprobs) for the assistant, input_text
// for anyone else.
func AppendTextPart(dst []byte, role, text string) []byte {
	if role == "assistant" {
		dst = append(dst, OutputTextHead...)
		dst = guestjson.AppendString(dst, text)
		return append(dst, OutputTextTail...)
	}
	dst = append(dst, `{"type":"input_text","text":`...)
	dst = guestjson.AppendString(dst, text)
	return append(dst, '}')
}

// CallItem is a tool call output item: a function_call (with its
// namespace when the function was offered inside one) or, for a custom
// tool, a custom_tool_call whose input is the input argument of the
// function it was offered as (CustomInput).
type CallItem struct {
	ItemID, CallID, Namespace, Name, Arguments, Status string
	Custom                                             bool
}

// AppendCallItem appends c.
func AppendCallItem(dst []byte, c CallItem) []byte {
	dst = append(dst, ItemHead...)
	dst = guestjson.AppendString(dst, c.ItemID)
	if c.Custom {
		dst = append(dst, `,"type":"custom_tool_call","status":`...)
	} else {
		dst = append(dst, `,"type":"function_call","status":`...)
	}
	dst = guestjson.AppendString(dst, c.Status)
	dst = append(dst, `,"call_id":`...)
	dst = guestjson.AppendString(dst, c.CallID)
	if c.Namespace != "" {
		dst = append(dst, `,"namespace":`...)
		dst = guestjson.AppendString(dst, c.Namespace)
	}
	dst = append(dst, `,"name":`...)
	dst = guestjson.AppendString(dst, c.Name)
	if c.Custom {
		dst = append(dst, `,"input":`...)
		dst = guestjson.AppendString(dst, CustomInput(c.Arguments))
	} else {
		dst = append(dst, `,"arguments":`...)
		dst = guestjson.AppendString(dst, c.Arguments)
	}
	return append(dst, '}')
}

// CustomInput is a custom tool call's input: the string argument input of
// the function the tool was offered as, or the whole arguments text when
// the model sent no such string.
func CustomInput(arguments string) string {
	if in := guestjson.Parse(guestjson.View([]byte(arguments))).Get("input"); in.IsString() {
		return in.Str()
	}
	return arguments
}

// Reasoning is a reasoning item's content: summary texts, reasoning texts
// and the opaque encrypted_content a provider returns (left out when "").
type Reasoning struct {
	Summary, Content []string
	EncryptedContent string
}

// AppendReasoningItem appends a reasoning item whose summary is one
// summary_text part holding summary (none when ""), as a Response and its
// stream show the reasoning an upstream gave. It has no encrypted_content:
// a chat completions upstream gives none to carry.
func AppendReasoningItem(dst []byte, id, summary string) []byte {
	return AppendSealedReasoningItem(dst, id, summary, "")
}

// AppendSealedReasoningItem is AppendReasoningItem with encrypted_content
// encrypted (left out when ""): the upstream's reasoning that runedge
// sealed for a turn that asked for it (include
// reasoning.encrypted_content).
func AppendSealedReasoningItem(dst []byte, id, summary, encrypted string) []byte {
	dst = append(dst, ItemHead...)
	dst = guestjson.AppendString(dst, id)
	dst = append(dst, `,"type":"reasoning","summary":[`...)
	if summary != "" {
		dst = appendTextParts(dst, "summary_text", summary)
	}
	dst = append(dst, ']')
	if encrypted != "" {
		dst = append(dst, `,"encrypted_content":`...)
		dst = guestjson.AppendString(dst, encrypted)
	}
	return append(dst, '}')
}

// AppendReasoning appends a reasoning item with all of r: its summary, its
// content when it has one, and encrypted_content when it has one.
func AppendReasoning(dst []byte, id string, r Reasoning) []byte {
	dst = append(dst, ItemHead...)
	dst = guestjson.AppendString(dst, id)
	dst = append(dst, `,"type":"reasoning","summary":[`...)
	dst = appendTextParts(dst, "summary_text", r.Summary...)
	dst = append(dst, ']')
	if len(r.Content) > 0 {
		dst = append(dst, `,"content":[`...)
		dst = appendTextParts(dst, "reasoning_text", r.Content...)
		dst = append(dst, ']')
	}
	if r.EncryptedContent != "" {
		dst = append(dst, `,"encrypted_content":`...)
		dst = guestjson.AppendString(dst, r.EncryptedContent)
	}
	return append(dst, '}')
}

// appendTextParts appends {"type":typ,"text":…} for each text, comma
// separated.
func appendTextParts(dst []byte, typ string, texts ...string) []byte {
	for i, t := range texts {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":"`...)
		dst = append(dst, typ...)
		dst = append(dst, `","text":`...)
		dst = guestjson.AppendString(dst, t)
		dst = append(dst, '}')
	}
	return dst
}

// AppendCompactionItem appends a compaction item carrying encrypted, the
// sealed summary.
func AppendCompactionItem(dst []byte, id, encrypted string) []byte {
	dst = append(dst, ItemHead...)
	dst = guestjson.AppendString(dst, id)
	dst = append(dst, `,"type":"compaction","encrypted_content":`...)
	dst = guestjson.AppendString(dst, encrypted)
	return append(dst, '}')
}

// AppendItemReference appends an item_reference to stored item id, as a
// stored input that referenced it lists it.
func AppendItemReference(dst []byte, id string) []byte {
	dst = append(dst, `{"type":"item_reference","id":`...)
	dst = guestjson.AppendString(dst, id)
	return append(dst, '}')
}
