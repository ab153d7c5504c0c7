package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
)

// TestMediaURLPolicy: the URLs of images and files clients send reach the
// upstream only when they are https: or data: and not a private, loopback
// or link-local host, on both endpoints and both builds of the default
// mapping; anything else is 400 naming the part, no run is created and
// the upstream is not called. A file by URL is refused by name (the
// upstream's chat completions has no field for it), as is file_data that
// is a URL. media.allow_private_hosts and media.allow_http open what they
// name. Before, every one of these URLs reached the upstream as given, and
// file_url went as file.file_data.
func TestMediaURLPolicy(t *testing.T) {
	chatImage := func(u string) string {
		return `{"model":"service","messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"` + u + `"}}]}]}`
	}
	refused := []struct{ name, path, body, code, param string }{
		{"metadata address", "/v1/responses", responsesImage("http://169.254.169.254/latest/meta-data/"), "invalid_body", "input[0].content[1].image_url"},
		{"https metadata address", "/v1/chat/completions", chatImage("https://169.254.169.254/latest/meta-data/"), "invalid_body", "messages[1].content[1].image_url"},
		{"gopher", "/v1/responses", responsesImage("gopher://example.com/_x"), "invalid_body", "input[0].content[1].image_url"},
		{"file", "/v1/chat/completions", chatImage("file:///etc/passwd"), "invalid_body", "messages[1].content[1].image_url"},
		{"loopback as a number", "/v1/responses", responsesImage("https://2130706433/x.png"), "invalid_body", "input[0].content[1].image_url"},
		{"localhost", "/v1/chat/completions", chatImage("https://localhost:8080/x.png"), "invalid_body", "messages[1].content[1].image_url"},
		{"private IPv6", "/v1/responses", responsesImage("https://[fd00::1]/x.png"), "invalid_body", "input[0].content[1].image_url"},
		{"file_url", "/v1/responses",
			`{"model":"service","input":[{"role":"user","content":[{"type":"input_text","text":"read"},{"type":"input_file","file_url":"https://example.com/a.pdf"}]}]}`,
			"unsupported_parameter", "input[0].content[1].file_url"},
		{"file_data that is a URL (responses)", "/v1/responses",
			`{"model":"service","input":[{"role":"user","content":[{"type":"input_file","file_data":"http://10.0.0.1/a.pdf"}]}]}`,
			"invalid_body", "input[0].content[0].file_data"},
		{"file_data that is a URL (chat)", "/v1/chat/completions",
			`{"model":"service","messages":[{"role":"user","content":[{"type":"file","file":{"file_data":"https://example.com/a.pdf"}}]}]}`,
			"invalid_body", "messages[0].content[0].file.file_data"},
	}
	eachMapping(t, func(t *testing.T, mapping func(*config.Config)) {
		up := newScripted(t, wholeOf("ok"))
		h := start(t, func(c *config.Config) { mapping(c); viaOpenAI(up.srv.URL, nil)(c) })
		for _, c := range refused {
			t.Run(c.name, func(t *testing.T) {
				apiError(t, h.do("POST", c.path, c.body), http.StatusBadRequest, c.code, c.param)
			})
		}
		if n := len(up.requests()); n != 0 {
			t.Fatalf("refused media reached the upstream %d times: %s", n, up.requests()[0])
		}
		for _, c := range []struct{ path, body string }{
			{"/v1/responses", responsesImage("https://example.com/cat.png")},
			{"/v1/chat/completions", chatImage("data:image/png;base64,iVBORw0KGgo=")},
		} {
			if res := h.do("POST", c.path, c.body); res.StatusCode != 200 {
				t.Fatalf("%s: status %d: %s", c.path, res.StatusCode, body(t, res))
			}
		}
	})

	// input_tokens refuses as /v1/responses does, and a conversation's
	// stored item that breaks the policy refuses the turn that would send
	// it upstream.
	h0 := start(t, nil)
	apiError(t, h0.do("POST", "/v1/responses/input_tokens", responsesImage("https://127.0.0.1/x.png")), http.StatusBadRequest, "invalid_body", "input[0].content[1].image_url")
	_, conv := convDo(t, h0, "POST", "/v1/conversations",
		`{"items":[{"role":"user","content":[{"type":"input_image","image_url":"http://169.254.169.254/"}]}]}`)
	apiError(t, h0.do("POST", "/v1/responses", `{"model":"service","input":"and now?","conversation":"`+gjson.Get(conv, "id").Str+`"}`,
		"x-service-tenant-id", "t1"), http.StatusBadRequest, "invalid_body", "conversation")

	// The settings open what they name, and only that.
	up := newScripted(t, wholeOf("ok"), wholeOf("ok"))
	h := start(t, func(c *config.Config) {
		viaOpenAI(up.srv.URL, nil)(c)
		c.Media.AllowPrivateHosts = true
	})
	if res := h.do("POST", "/v1/responses", responsesImage("https://10.1.2.3/cat.png")); res.StatusCode != 200 {
		t.Fatalf("allow_private_hosts: status %d: %s", res.StatusCode, body(t, res))
	}
	if got := gjson.Get(up.requests()[0], "messages.0.content.1.image_url.url").Str; got != "https://10.1.2.3/cat.png" {
		t.Fatalf("upstream got %q", got)
	}
	apiError(t, h.do("POST", "/v1/responses", responsesImage("http://10.1.2.3/cat.png")), http.StatusBadRequest, "invalid_body", "input[0].content[1].image_url")
	h2 := start(t, func(c *config.Config) {
		viaOpenAI(up.srv.URL, nil)(c)
		c.Media.AllowHTTP = true
	})
	if res := h2.do("POST", "/v1/responses", responsesImage("http://example.com/cat.png")); res.StatusCode != 200 {
		t.Fatalf("allow_http: status %d: %s", res.StatusCode, body(t, res))
	}
	b := body(t, h2.do("POST", "/v1/responses", responsesImage("http://127.0.0.1/cat.png")))
	if !strings.Contains(string(b), "media.allow_private_hosts") {
		t.Fatalf("allow_http alone passed a loopback host: %s", b)
	}
}

// responsesImage is a Responses request with one image part of URL u.
func responsesImage(u string) string {
	return `{"model":"service","input":[{"role":"user","content":[{"type":"input_text","text":"look"},{"type":"input_image","image_url":"` + u + `"}]}]}`
}
