package openai

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/runedge/runedge/runner"
)

// Reasoning an upstream sends beside the answer (vLLM's reasoning_content,
// OpenRouter's reasoning) becomes Result.Reasoning, streamed or whole; an
// object under those names is ignored, not a failure.
func TestUpstreamReasoning(t *testing.T) {
	for _, c := range []struct {
		name, body string
		stream     bool
		want       string
	}{
		{"stream reasoning_content", "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"Six \"}}]}\n\n" +
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"times seven.\",\"content\":null}}]}\n\n" +
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"42\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", true, "Six times seven."},
		{"stream reasoning", "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"Hm.\",\"reasoning_details\":[{}]}}]}\n\n" +
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"42\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", true, "Hm."},
		{"whole", `{"choices":[{"index":0,"message":{"content":"42","reasoning_content":"Six times seven.","reasoning":"Six times seven."},"finish_reason":"stop"}]}`, false, "Six times seven."},
		{"object ignored", `{"choices":[{"index":0,"message":{"content":"42","reasoning":{"tokens":3}},"finish_reason":"stop"}]}`, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.stream {
					w.Header().Set("Content-Type", "text/event-stream")
				} else {
					w.Header().Set("Content-Type", "application/json")
				}
				w.Write([]byte(c.body))
			}))
			defer srv.Close()
			p, err := New(Config{BaseURL: srv.URL, Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			res, err := p.Generate(context.Background(), runner.ProviderRequest{Messages: []runner.Message{{Role: "user", Content: "6*7?"}}, Stream: c.stream},
				func(runner.Event) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "42" || res.Reasoning != c.want {
				t.Errorf("text %q reasoning %q, want 42 and %q", res.Text, res.Reasoning, c.want)
			}
		})
	}
}

// Opened reasoning (Reasoning.Opened, set by the host for an item it
// sealed) goes upstream as reasoning_content of its assistant message:
// the one before it (runedge's order), else the one after it (OpenAI's);
// a reasoning item without opened text, or next to no assistant message,
// adds nothing.
func TestOpenedReasoningOnItsAssistantMessage(t *testing.T) {
	rs := func(opened string) runner.Message {
		return runner.Message{Role: runner.RoleReasoning, Reasoning: &runner.Reasoning{Summary: []string{"s"}, Opened: opened}}
	}
	msgs := []runner.Message{
		{Role: "user", Content: "a"}, {Role: "assistant", Content: "A"}, rs("after A"), rs("more A"),
		{Role: "user", Content: "b"}, rs("before B"), {Role: "assistant", Content: "B"},
		{Role: "user", Content: "c"}, rs("nobody's"), {Role: "user", Content: "d"}, {Role: "assistant", Content: "D"}, rs(""),
	}
	var got []string
	for _, w := range wireMessages(msgs) {
		got = append(got, w.Role+":"+w.ReasoningContent)
	}
	want := []string{"user:", "assistant:after A\n\nmore A", "user:", "assistant:before B", "user:", "user:", "assistant:"}
	if len(got) != len(want) {
		t.Fatalf("wire messages %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("message %d: %q, want %q", i, got[i], want[i])
		}
	}
}
