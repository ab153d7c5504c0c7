package server

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/runedge/runedge/host/config"
)

// slowStreams is a server whose offline provider pauses 250 ms between
// tokens and whose streams send a keepalive after 100 ms of silence.
func slowStreams(t *testing.T, keepalive time.Duration) *harness {
	return start(t, func(c *config.Config) {
		c.Provider.Offline.TokenDelay = config.Dur(250 * time.Millisecond)
		d := config.Dur(keepalive)
		c.Limits.SSEKeepalive = &d
	})
}

// rawLines reads a stream's lines as they come.
func rawLines(t *testing.T, h *harness, path, reqBody string) []string {
	t.Helper()
	res := h.do("POST", path, reqBody)
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("%s: %d", path, res.StatusCode)
	}
	var lines []string
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if sc.Text() != "" {
			lines = append(lines, sc.Text())
		}
	}
	return lines
}

// A silent stream sends ": keepalive" comments: between tokens, and (a
// structured answer is validated before any of it is streamed) while
// waiting for the first token, after the headers.
func TestSSEKeepalive(t *testing.T) {
	h := slowStreams(t, 100*time.Millisecond)

	lines := rawLines(t, h, "/v1/chat/completions",
		`{"model":"service","stream":true,"messages":[{"role":"user","content":"one two three"}]}`)
	for _, l := range lines {
		if l != ": keepalive" && !strings.HasPrefix(l, "data: ") {
			t.Fatalf("unexpected line %q", l)
		}
	}
	if between := keepalivesBetween(lines, "data: "); between < 3 { // four pauses of 250 ms between five tokens
		t.Fatalf("%d keepalives between chunks, want at least 3:\n%s", between, strings.Join(lines, "\n"))
	}

	lines = rawLines(t, h, "/v1/responses", `{"model":"service","stream":true,"input":"Ada Lovelace",
		"text":{"format":{"type":"json_schema","name":"person","strict":true,"schema":`+string(personSchemaJSON(t))+`}}}`)
	firstKeepalive, firstDelta := -1, -1
	for i, l := range lines {
		if l == ": keepalive" && firstKeepalive < 0 {
			firstKeepalive = i
		}
		if l == "event: response.output_text.delta" && firstDelta < 0 {
			firstDelta = i
		}
	}
	if firstKeepalive < 0 || firstDelta < 0 || firstKeepalive > firstDelta {
		t.Fatalf("keepalive at line %d, first delta at %d: want a keepalive before the first token:\n%s",
			firstKeepalive, firstDelta, strings.Join(lines, "\n"))
	}
	if !strings.HasPrefix(lines[0], "event: response.created") {
		t.Fatalf("stream does not start with response.created:\n%s", strings.Join(lines, "\n"))
	}
}

// limits.sse_keepalive: 0 disables them.
func TestSSEKeepaliveDisabled(t *testing.T) {
	h := slowStreams(t, 0)
	lines := rawLines(t, h, "/v1/chat/completions",
		`{"model":"service","stream":true,"messages":[{"role":"user","content":"one two three"}]}`)
	for _, l := range lines {
		if strings.HasPrefix(l, ":") {
			t.Fatalf("comment %q with keepalives off", l)
		}
	}
}

// openai-go reads streams with keepalive comments as if they were not
// there.
func TestSSEKeepaliveOpenAIGo(t *testing.T) {
	h := slowStreams(t, 100*time.Millisecond)
	ctx := context.Background()
	client := openai.NewClient(option.WithBaseURL(h.URL+"/v1/"), option.WithAPIKey(tokApp), option.WithMaxRetries(0))

	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:    "service",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("one two three")},
	})
	acc := openai.ChatCompletionAccumulator{}
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	// role, five tokens, finish: a comment read as a chunk would add one.
	if got := acc.Choices[0].Message.Content; got != "You said: one two three" || chunks != 7 {
		t.Fatalf("accumulated %q from %d chunks, want 7", got, chunks)
	}

	rs := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{
		Model: "service",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("one two three")},
	})
	var text strings.Builder
	completed := false
	for rs.Next() {
		ev := rs.Current()
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.AsResponseOutputTextDelta().Delta)
		case "response.completed":
			completed = true
		case "":
			t.Fatalf("an event without a type: %s", ev.RawJSON())
		}
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != "You said: one two three" || !completed {
		t.Fatalf("responses stream: %q completed=%v", text.String(), completed)
	}
}

func personSchemaJSON(t *testing.T) []byte {
	t.Helper()
	b, err := json.Marshal(personSchema)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// keepalivesBetween counts the gaps between two lines starting with chunk
// that carry a keepalive comment.
func keepalivesBetween(lines []string, chunk string) int {
	between, inGap := 0, false
	for _, l := range lines {
		switch {
		case l == ": keepalive":
			inGap = true
		case strings.HasPrefix(l, chunk):
			if inGap {
				between++
			}
			inGap = false
		}
	}
	return between
}
