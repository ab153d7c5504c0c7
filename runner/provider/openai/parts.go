package openai

import (
	"encoding/json"

	"github.com/runedge/runedge/runner"
)

// Images, files and audio in chat completions form: a message with such
// parts sends its content as a list of parts, as OpenAI's chat completions
// takes them and vLLM, OpenRouter and the rest follow:
//
//	{"type":"text","text"}
//	{"type":"image_url","image_url":{"url","detail"}}
//	{"type":"file","file":{"file_data","filename"}}
//	{"type":"input_audio","input_audio":{"data","format"}}
//
// A file given by URL (Responses file_url) has no chat completions field of
// its own, so the edge refuses it before a run exists (filters/mapping,
// internal/mediaurl: 400 naming the part), as it refuses file_data that is
// a URL and image URLs outside media.*; what reaches here passed that
// policy. A URL part that some other caller built would go as file_data.

type wirePart struct {
	Type       string         `json:"type"`
	Text       *string        `json:"text,omitempty"`
	ImageURL   *wireImageURL  `json:"image_url,omitempty"`
	File       *wireFile      `json:"file,omitempty"`
	InputAudio *wireAudioData `json:"input_audio,omitempty"`
}

type wireImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type wireFile struct {
	FileData string `json:"file_data"`
	Filename string `json:"filename,omitempty"`
}

type wireAudioData struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

func wireParts(parts []runner.Part) []wirePart {
	out := make([]wirePart, len(parts))
	for i, p := range parts {
		switch p.Type {
		case runner.PartImage:
			out[i] = wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: p.URL, Detail: p.Detail}}
		case runner.PartFile:
			data := p.Data
			if data == "" {
				data = p.URL
			}
			out[i] = wirePart{Type: "file", File: &wireFile{FileData: data, Filename: p.Filename}}
		case runner.PartAudio:
			out[i] = wirePart{Type: "input_audio", InputAudio: &wireAudioData{Data: p.Data, Format: p.Format}}
		default:
			out[i] = wirePart{Type: "text", Text: &parts[i].Text}
		}
	}
	return out
}

// callArguments is a replayed call's arguments on the wire. A custom
// tool's call carries free-form input, which a chat completions upstream
// knows only as a function of one string argument: {"input": …}.
func callArguments(c runner.ToolCall) string {
	if !c.Custom {
		return c.Arguments
	}
	b, _ := json.Marshal(struct { // a string: cannot fail
		Input string `json:"input"`
	}{c.Arguments})
	return string(b)
}
