package api

import (
	"encoding/json"

	"github.com/runedge/runedge/internal/respjson"
	"github.com/runedge/runedge/runner"
)

// itemJSON renders a stored native message as a Responses item
// (internal/respjson writes it): an input message (its images, files and
// audio as the parts the client sent), an assistant message with
// output_text and its phase, a reasoning item, or the item_reference the
// client sent (the stored input keeps references, not copies of what they
// name: listing them costs what the request did).
func itemJSON(it runner.Item) json.RawMessage {
	if it.Message.Ref != "" {
		return respjson.AppendItemReference(nil, it.Message.Ref)
	}
	if r := it.Message.Reasoning; it.Message.Role == runner.RoleReasoning && r != nil {
		return respjson.AppendReasoning(nil, it.ID, respjson.Reasoning{Summary: r.Summary, Content: r.Content, EncryptedContent: r.EncryptedContent})
	}
	m := it.Message
	parts := make([]respjson.Part, 0, max(len(m.Parts), 1))
	for _, p := range m.Parts {
		parts = append(parts, part(p))
	}
	if len(m.Parts) == 0 {
		parts = append(parts, respjson.Part{Text: m.Content})
	}
	return respjson.AppendMessage(nil, respjson.Message{ID: it.ID, Role: m.Role, Phase: m.Phase, Parts: parts})
}

// part is a stored content part as the writer takes it.
func part(p runner.Part) respjson.Part {
	switch p.Type {
	case runner.PartImage:
		return respjson.Part{Kind: respjson.PartImage, URL: p.URL, Detail: p.Detail}
	case runner.PartFile:
		return respjson.Part{Kind: respjson.PartFile, Data: p.Data, URL: p.URL, Filename: p.Filename}
	case runner.PartAudio:
		return respjson.Part{Kind: respjson.PartAudio, Data: p.Data, Format: p.Format}
	}
	return respjson.Part{Text: p.Text}
}
