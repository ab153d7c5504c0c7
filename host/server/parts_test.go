package server

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
)

// Images and files sent through openai-go reach a scripted upstream over a
// real socket in chat completions form, on both endpoints and both builds
// of the default mapping; the stored response lists them as input items.

var (
	partsPDF = "data:application/pdf;base64," + base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 runedge test"))
	partsPNG = "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n"))
)

func TestPartsReachUpstream(t *testing.T) {
	eachMapping(t, func(t *testing.T, mapping func(*config.Config)) {
		up := newScripted(t, wholeOf("I see a cat and a PDF."))
		h := start(t, func(c *config.Config) { mapping(c); viaOpenAI(up.srv.URL, nil)(c) })
		client := openai.NewClient(option.WithBaseURL(h.URL+"/v1/"), option.WithAPIKey(tokApp), option.WithMaxRetries(0))
		ctx := context.Background()

		content := responses.ResponseInputMessageContentListParam{
			{OfInputText: &responses.ResponseInputTextParam{Text: "What are these?"}},
			{OfInputImage: &responses.ResponseInputImageParam{ImageURL: openai.String("https://example.com/cat.png"), Detail: responses.ResponseInputImageDetailHigh}},
			{OfInputFile: &responses.ResponseInputFileParam{FileData: openai.String(partsPDF), Filename: openai.String("doc.pdf")}},
		}
		r, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "service",
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
				responses.ResponseInputItemParamOfMessage(content, responses.EasyInputMessageRoleUser)}}})
		if err != nil {
			t.Fatal(err)
		}
		if r.OutputText() != "I see a cat and a PDF." {
			t.Fatalf("output %q", r.OutputText())
		}
		got := gjson.Get(up.requests()[0], "messages.0.content").Raw
		want := `[{"type":"text","text":"What are these?"},{"type":"image_url","image_url":{"url":"https://example.com/cat.png","detail":"high"}},` +
			`{"type":"file","file":{"file_data":"` + partsPDF + `","filename":"doc.pdf"}}]`
		if got != want {
			t.Errorf("upstream content\n got %s\nwant %s", got, want)
		}
		page, err := client.Responses.InputItems.List(ctx, r.ID, responses.InputItemListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) != 1 || page.Data[0].Type != "message" {
			t.Fatalf("input items %s", page.RawJSON())
		}
		c := gjson.Get(page.Data[0].RawJSON(), "content")
		if c.Get("1.type").Str != "input_image" || c.Get("1.image_url").Str != "https://example.com/cat.png" || c.Get("1.detail").Str != "high" ||
			c.Get("2.type").Str != "input_file" || c.Get("2.file_data").Str != partsPDF || c.Get("2.filename").Str != "doc.pdf" {
			t.Errorf("listed parts %s", page.Data[0].RawJSON())
		}

		// Chat: image_url (a data URL) and file parts.
		_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "service",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
				openai.TextContentPart("Read"),
				openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: partsPNG}),
				openai.FileContentPart(openai.ChatCompletionContentPartFileFileParam{FileData: openai.String(partsPDF), Filename: openai.String("doc.pdf")}),
			})}})
		if err != nil {
			t.Fatal(err)
		}
		got = gjson.Get(up.requests()[1], "messages.0.content").Raw
		want = `[{"type":"text","text":"Read"},{"type":"image_url","image_url":{"url":"` + partsPNG + `"}},` +
			`{"type":"file","file":{"file_data":"` + partsPDF + `","filename":"doc.pdf"}}]`
		if got != want {
			t.Errorf("upstream chat content\n got %s\nwant %s", got, want)
		}
	})
}

// The offline provider names what it received; file_id is refused by
// name; a part too large for the body limit is a 413.
func TestPartsOfflineAndRefused(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Limits.MaxBodyBytes = 64 << 10 })
	res := h.do("POST", "/v1/responses", `{"model":"service","input":[{"role":"user","content":[{"type":"input_text","text":"Look"},`+
		`{"type":"input_image","image_url":"`+partsPNG+`"},{"type":"input_file","filename":"doc.pdf","file_data":"`+partsPDF+`"},`+
		`{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}]}]}`)
	b := body(t, res)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	if got, want := gjson.GetBytes(b, "output_text").Str, "You said: Look [image image/png 12 bytes] [file doc.pdf application/pdf 28 bytes] [audio wav 8 bytes]"; got != want {
		t.Errorf("offline answer\n got %q\nwant %q", got, want)
	}
	for _, c := range []struct{ path, body, param string }{
		{"/v1/responses", `{"model":"service","input":[{"role":"user","content":[{"type":"input_file","file_id":"file-abc"}]}]}`, "input[0].content[0].file_id"},
		{"/v1/responses", `{"model":"service","input":[{"role":"user","content":[{"type":"input_image","file_id":"file-abc","detail":"auto"}]}]}`, "input[0].content[0].file_id"},
		{"/v1/chat/completions", `{"model":"service","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-abc"}}]}]}`, "messages[0].content[0].file.file_id"},
	} {
		res := h.do("POST", c.path, c.body)
		b := body(t, res)
		if res.StatusCode != http.StatusBadRequest || gjson.GetBytes(b, "error.code").Str != "unsupported_parameter" || gjson.GetBytes(b, "error.param").Str != c.param {
			t.Errorf("%s: %d %s, want 400 unsupported_parameter %s", c.body, res.StatusCode, b, c.param)
		}
	}
	big := "data:image/png;base64," + strings.Repeat("A", 80<<10)
	res = h.do("POST", "/v1/responses", `{"model":"service","input":[{"role":"user","content":[{"type":"input_image","image_url":"`+big+`"}]}]}`)
	if b := body(t, res); res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("an image over the body limit: %d %s", res.StatusCode, b)
	}
}
