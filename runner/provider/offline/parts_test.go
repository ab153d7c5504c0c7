package offline_test

import (
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/provider/offline"
)

// The offline provider names each image, file and audio part it received,
// deterministically, and ignores replayed reasoning.
func TestNamesParts(t *testing.T) {
	msgs := []runner.Message{
		{Role: runner.RoleReasoning, Reasoning: &runner.Reasoning{Summary: []string{"thinking"}}},
		{Role: "user", Content: "Look", Parts: []runner.Part{
			{Type: runner.PartText, Text: "Look"},
			{Type: runner.PartImage, URL: "https://example.com/cat.png", Detail: "high"},
			{Type: runner.PartImage, URL: "data:image/png;base64,iVBORw0KGgo="},
			{Type: runner.PartFile, Filename: "a.pdf", Data: "data:application/pdf;base64,JVBERi0xLjQK"},
			{Type: runner.PartFile, URL: "https://example.com/b.pdf"},
			{Type: runner.PartAudio, Data: "UklGRg==", Format: "wav"},
		}},
	}
	_, res, err := generate(t, offline.New(offline.Config{}), runner.ProviderRequest{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	want := "You said: Look [image https://example.com/cat.png detail=high] [image image/png 12 bytes]" +
		" [file a.pdf application/pdf 12 bytes] [file https://example.com/b.pdf] [audio wav 8 bytes]"
	if res.Text != want {
		t.Errorf("text\n got %q\nwant %q", res.Text, want)
	}
}
