package api

import (
	"encoding/json"

	"github.com/runedge/runedge/runner"
)

// itemJSON renders a stored native message as a Responses item: an input
// message (its images, files and audio as the parts the client sent), an
// assistant message with output_text and its phase, a reasoning item, or
// the item_reference the client sent (the stored input keeps references,
// not copies of what they name: listing them costs what the request did).
func itemJSON(it runner.Item) json.RawMessage {
	if it.Message.Ref != "" {
		b, _ := json.Marshal(struct { // cannot fail: strings only
			Type string `json:"type"`
			ID   string `json:"id"`
		}{"item_reference", it.Message.Ref})
		return b
	}
	if r := it.Message.Reasoning; it.Message.Role == runner.RoleReasoning && r != nil {
		return reasoningJSON(it.ID, r)
	}
	m := it.Message
	var parts []itemPart
	switch {
	case len(m.Parts) > 0:
		for _, p := range m.Parts {
			parts = append(parts, partJSON(p, m.Role))
		}
	default:
		parts = []itemPart{textPart(m.Content, m.Role)}
	}
	b, _ := json.Marshal(struct { // cannot fail: strings only
		ID      string     `json:"id"`
		Type    string     `json:"type"`
		Role    string     `json:"role"`
		Status  string     `json:"status"`
		Phase   string     `json:"phase,omitempty"`
		Content []itemPart `json:"content"`
	}{it.ID, "message", m.Role, "completed", m.Phase, parts})
	return b
}

// itemPart is one content part of a listed message, in the Responses API's
// form.
type itemPart struct {
	Type        string      `json:"type"`
	Text        *string     `json:"text,omitempty"`
	Annotations *[]any      `json:"annotations,omitempty"`
	Logprobs    *[]any      `json:"logprobs,omitempty"`
	ImageURL    string      `json:"image_url,omitempty"`
	Detail      string      `json:"detail,omitempty"`
	FileData    string      `json:"file_data,omitempty"`
	FileURL     string      `json:"file_url,omitempty"`
	Filename    string      `json:"filename,omitempty"`
	InputAudio  *audioInput `json:"input_audio,omitempty"`
}

type audioInput struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

func textPart(text, role string) itemPart {
	if role == "assistant" {
		return itemPart{Type: "output_text", Text: &text, Annotations: &[]any{}, Logprobs: &[]any{}}
	}
	return itemPart{Type: "input_text", Text: &text}
}

func partJSON(p runner.Part, role string) itemPart {
	switch p.Type {
	case runner.PartImage:
		d := p.Detail
		if d == "" {
			d = "auto"
		}
		return itemPart{Type: "input_image", ImageURL: p.URL, Detail: d}
	case runner.PartFile:
		return itemPart{Type: "input_file", FileData: p.Data, FileURL: p.URL, Filename: p.Filename}
	case runner.PartAudio:
		return itemPart{Type: "input_audio", InputAudio: &audioInput{Data: p.Data, Format: p.Format}}
	}
	return textPart(p.Text, role)
}

// reasoningJSON is a stored reasoning item: its summary and reasoning text
// as parts, and encrypted_content when it has one.
func reasoningJSON(id string, r *runner.Reasoning) json.RawMessage {
	type text struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	summary, content := []text{}, []text(nil)
	for _, s := range r.Summary {
		summary = append(summary, text{"summary_text", s})
	}
	for _, s := range r.Content {
		content = append(content, text{"reasoning_text", s})
	}
	b, _ := json.Marshal(struct { // cannot fail: strings only
		ID               string `json:"id"`
		Type             string `json:"type"`
		Summary          []text `json:"summary"`
		Content          []text `json:"content,omitempty"`
		EncryptedContent string `json:"encrypted_content,omitempty"`
	}{id, "reasoning", summary, content, r.EncryptedContent})
	return b
}
