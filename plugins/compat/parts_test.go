package compat

import (
	"testing"

	"github.com/tidwall/gjson"
)

// Images, files and audio become native parts, on both endpoints; a
// text-only message is written as before, without parts.
func TestMapContentParts(t *testing.T) {
	const png = "data:image/png;base64,iVBORw0KGgo="
	const pdf = "data:application/pdf;base64,JVBERi0xLjQK"
	for _, c := range []struct{ name, endpoint, body, input string }{
		{"responses image URL with detail", EndpointResponses,
			`{"model":"service","input":[{"role":"user","content":[{"type":"input_text","text":"What is it?"},{"type":"input_image","image_url":"https://example.com/cat.png","detail":"high"}]}]}`,
			`[{"role":"user","content":"What is it?","parts":[{"type":"text","text":"What is it?"},{"type":"image","url":"https://example.com/cat.png","detail":"high"}]}]`},
		{"responses image data URL", EndpointResponses,
			`{"model":"service","input":[{"role":"user","content":[{"type":"input_image","image_url":"` + png + `"}]}]}`,
			`[{"role":"user","content":"","parts":[{"type":"image","url":"` + png + `"}]}]`},
		{"responses file data", EndpointResponses,
			`{"model":"service","input":[{"role":"user","content":[{"type":"input_file","filename":"a.pdf","file_data":"` + pdf + `"},{"type":"input_text","text":"Sum up"}]}]}`,
			`[{"role":"user","content":"Sum up","parts":[{"type":"file","data":"` + pdf + `","filename":"a.pdf"},{"type":"text","text":"Sum up"}]}]`},
		{"responses file URL", EndpointResponses,
			`{"model":"service","input":[{"role":"user","content":[{"type":"input_file","file_url":"https://example.com/a.pdf"}]}]}`,
			`[{"role":"user","content":"","parts":[{"type":"file","url":"https://example.com/a.pdf"}]}]`},
		{"responses audio", EndpointResponses,
			`{"model":"service","input":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}]}]}`,
			`[{"role":"user","content":"","parts":[{"type":"audio","data":"UklGRg==","format":"wav"}]}]`},
		{"chat image_url", EndpointChat,
			`{"model":"service","messages":[{"role":"user","content":[{"type":"text","text":"x"},{"type":"image_url","image_url":{"url":"https://x/y.png","detail":"low"}}]}]}`,
			`[{"role":"user","content":"x","parts":[{"type":"text","text":"x"},{"type":"image","url":"https://x/y.png","detail":"low"}]}]`},
		{"chat file", EndpointChat,
			`{"model":"service","messages":[{"role":"user","content":[{"type":"file","file":{"filename":"a.pdf","file_data":"` + pdf + `"}}]}]}`,
			`[{"role":"user","content":"","parts":[{"type":"file","data":"` + pdf + `","filename":"a.pdf"}]}]`},
		{"chat input_audio", EndpointChat,
			`{"model":"service","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"SUQz","format":"mp3"}}]}]}`,
			`[{"role":"user","content":"","parts":[{"type":"audio","data":"SUQz","format":"mp3"}]}]`},
		{"text parts only stay text", EndpointChat,
			`{"model":"service","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`,
			`[{"role":"user","content":"ab"}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			request, _ := mapOK(t, c.endpoint, c.body)
			if got, want := gjson.Get(request, "input").Raw, compact(t, c.input); got != want {
				t.Errorf("input\n got: %s\nwant: %s", got, want)
			}
		})
	}
}

// file_id needs a files API: refused by name; parts outside user
// messages are refused; malformed parts are invalid.
func TestMapContentPartsRefused(t *testing.T) {
	for _, c := range []struct{ name, endpoint, body, param, code string }{
		{"responses image file_id", EndpointResponses,
			`{"model":"service","input":[{"role":"user","content":[{"type":"input_image","file_id":"file-1"}]}]}`,
			"input[0].content[0].file_id", CodeUnsupportedParameter},
		{"responses file file_id", EndpointResponses,
			`{"model":"service","input":[{"role":"user","content":[{"type":"input_file","file_id":"file-1"}]}]}`,
			"input[0].content[0].file_id", CodeUnsupportedParameter},
		{"chat file file_id", EndpointChat,
			`{"model":"service","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-1"}}]}]}`,
			"messages[0].content[0].file.file_id", CodeUnsupportedParameter},
		{"image in a system message", EndpointChat,
			`{"model":"service","messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"https://x"}}]},{"role":"user","content":"x"}]}`,
			"messages[0].content[0].type", CodeUnsupportedParameter},
		{"image without URL", EndpointResponses,
			`{"model":"service","input":[{"role":"user","content":[{"type":"input_image"}]}]}`,
			"input[0].content[0].image_url", CodeInvalidBody},
		{"image with a bad detail", EndpointChat,
			`{"model":"service","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x","detail":"max"}}]}]}`,
			"messages[0].content[0].image_url.detail", CodeInvalidBody},
		{"file without data", EndpointResponses,
			`{"model":"service","input":[{"role":"user","content":[{"type":"input_file","filename":"a.pdf"}]}]}`,
			"input[0].content[0].file_data", CodeInvalidBody},
		{"audio without format", EndpointChat,
			`{"model":"service","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"x"}}]}]}`,
			"messages[0].content[0].input_audio.format", CodeInvalidBody},
		{"chat image with the responses name", EndpointChat,
			`{"model":"service","messages":[{"role":"user","content":[{"type":"input_image","image_url":"https://x"}]}]}`,
			"messages[0].content[0].type", CodeInvalidBody},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := mapRefused(t, c.endpoint, c.body)
			if got.Param != c.param || got.Code != c.code {
				t.Errorf("got param %q code %q, want %q %s", got.Param, got.Code, c.param, c.code)
			}
		})
	}
}

// Every item a client replays is accepted: reasoning (kept for the
// history), assistant messages with phase, custom tool calls and their
// outputs (paired like function calls).
func TestMapReplayedItems(t *testing.T) {
	body := `{"model":"service","input":[
		{"role":"user","content":"list files"},
		{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Need ls."}],"encrypted_content":"gAAA"},
		{"type":"message","role":"assistant","phase":"commentary","content":[{"type":"output_text","text":"Looking."}]},
		{"type":"custom_tool_call","call_id":"call_1","name":"shell","input":"ls -l"},
		{"type":"custom_tool_call_output","call_id":"call_1","output":"a.txt"},
		{"type":"reasoning","summary":[]},
		{"type":"message","role":"assistant","phase":"final_answer","content":"One file."}]}`
	request, _ := mapOK(t, EndpointResponses, body)
	want := compact(t, `{"input":[{"role":"user","content":"list files"},
		{"role":"reasoning","content":"","reasoning":{"id":"rs_1","summary":["Need ls."],"encrypted_content":"gAAA"},"ref_index":1},
		{"role":"assistant","content":"Looking.","phase":"commentary"},
		{"role":"assistant","content":"","tool_calls":[{"id":"call_1","name":"shell","arguments":"ls -l","custom":true}]},
		{"role":"tool","content":"a.txt","tool_call_id":"call_1"},
		{"role":"reasoning","content":"","reasoning":{}},
		{"role":"assistant","content":"One file.","phase":"final_answer"}]}`)
	if got := compact(t, request); got != want {
		t.Errorf("request\n got: %s\nwant: %s", got, want)
	}
	for _, c := range []struct{ name, body, param string }{
		{"summary not a list", `{"model":"service","input":[{"type":"reasoning","summary":"x"}]}`, "input[0].summary"},
		{"summary part of another type", `{"model":"service","input":[{"type":"reasoning","summary":[{"type":"input_text","text":"x"}]}]}`, "input[0].summary[0]"},
		{"phase a number", `{"model":"service","input":[{"role":"assistant","phase":1,"content":"x"}]}`, "input[0].phase"},
		{"custom call without input", `{"model":"service","input":[{"type":"custom_tool_call","call_id":"c","name":"f"}]}`, "input[0].input"},
		{"unknown item", `{"model":"service","input":[{"type":"web_search_call"}]}`, "input[0].type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := mapInvalid(t, EndpointResponses, c.body); got.Param != c.param {
				t.Errorf("param %q, want %q", got.Param, c.param)
			}
		})
	}
}
