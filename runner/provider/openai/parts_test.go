package openai

import (
	"encoding/json"
	"testing"

	"github.com/runedge/runedge/runner"
)

// The chat completions form of every native part, reasoning left out, a
// custom call's input as {"input"}.
func TestWireParts(t *testing.T) {
	msgs := []runner.Message{
		{Role: runner.RoleReasoning, Reasoning: &runner.Reasoning{Summary: []string{"s"}, EncryptedContent: "e"}},
		{Role: "user", Content: "a", Parts: []runner.Part{
			{Type: runner.PartText, Text: "a"},
			{Type: runner.PartImage, URL: "https://x/i.png", Detail: "low"},
			{Type: runner.PartFile, Data: "data:application/pdf;base64,QQ==", Filename: "f.pdf"},
			{Type: runner.PartFile, URL: "https://x/f.pdf"},
			{Type: runner.PartAudio, Data: "UklGRg==", Format: "wav"},
		}},
		{Role: "assistant", Phase: "commentary", ToolCalls: []runner.ToolCall{{ID: "c", Name: "patch", Arguments: `say "hi"`, Custom: true}}},
		{Role: "tool", Content: "ok", ToolCallID: "c"},
	}
	b, err := json.Marshal(wireMessages(msgs))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"https://x/i.png","detail":"low"}},` +
		`{"type":"file","file":{"file_data":"data:application/pdf;base64,QQ==","filename":"f.pdf"}},{"type":"file","file":{"file_data":"https://x/f.pdf"}},` +
		`{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}]},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"patch","arguments":"{\"input\":\"say \\\"hi\\\"\"}"}}]},` +
		`{"role":"tool","content":"ok","tool_call_id":"c"}]`
	if string(b) != want {
		t.Errorf("wire\n got %s\nwant %s", b, want)
	}
	p := &Provider{cfg: Config{Model: "m"}}
	if _, ok := p.plainParts(runner.ProviderRequest{Messages: msgs[:2]}); ok {
		t.Error("a request with parts or reasoning took the plain path")
	}
}
