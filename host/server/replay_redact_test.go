package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/plugins/plugintest"
)

// TestPreviousResponseReplaysWhatTheClientGot: a previous_response_id turn
// sends the upstream the items of the Response the client received, after
// the result plugin (here the example redact plugin,
// examples/plugins/redact), not the native result: an address the client
// never saw never reaches the upstream on the next turn, whether the
// earlier turn was answered whole or streamed. A custom tool call is
// replayed as the call the client got (its call_id and input), which the
// next turn answers.
func TestPreviousResponseReplaysWhatTheClientGot(t *testing.T) {
	redact := plugintest.Build(t, "github.com/runedge/runedge/examples/plugins/redact")
	const secret = "jane.doe@example.com"
	answer := "Write to " + secret + " today."
	up := newScripted(t, func(w http.ResponseWriter, r *http.Request) {
		b := mustReadAll(r)
		switch {
		case strings.Contains(string(b), "patch it"):
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_p1","type":"function","function":{"name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`))
		case gjson.GetBytes(b, "stream").Bool():
			streamOf(answer[:12], answer[12:])(w, r)
		default:
			wholeOf(answer)(w, r)
		}
	})
	h := start(t, func(c *config.Config) {
		viaOpenAI(up.srv.URL, nil)(c)
		c.Chains[config.ChainResponses] = config.Chain{MapRequest: config.DefaultPlugin, Translate: redact}
	})
	bodies := func() []string {
		up.mu.Lock()
		defer up.mu.Unlock()
		return append([]string(nil), up.bodies...)
	}

	for _, stream := range []bool{false, true} {
		first := `{"model":"service","input":"where do I write?"}`
		var id string
		if stream {
			res := h.do("POST", "/v1/responses", strings.Replace(first, `"input"`, `"stream":true,"input"`, 1), "x-service-tenant-id", "t1")
			evs := readEvents(t, res.Body)
			res.Body.Close()
			last := evs[len(evs)-1]
			if last.Event != "response.completed" {
				t.Fatalf("stream ended with %s: %s", last.Event, last.Data)
			}
			if strings.Contains(last.Data, secret) {
				t.Fatalf("the client got the address: %s", last.Data)
			}
			id = gjson.Get(last.Data, "response.id").Str
		} else {
			got := postT1(t, h, first)
			if text := gjson.Get(got, "output_text").Str; strings.Contains(text, secret) || !strings.Contains(text, "[redacted email]") {
				t.Fatalf("the client got %q; want the address redacted", text)
			}
			id = gjson.Get(got, "id").Str
		}
		n := len(bodies())
		postT1(t, h, `{"model":"service","previous_response_id":"`+id+`","input":"and then?"}`)
		sent := bodies()
		if len(sent) != n+1 {
			t.Fatalf("stream %v: %d upstream calls for the second turn", stream, len(sent)-n)
		}
		next := sent[n]
		if strings.Contains(next, secret) {
			t.Errorf("stream %v: the next turn sent the upstream what the client did not see:\n%s", stream, next)
		}
		if !strings.Contains(next, "[redacted email]") {
			t.Errorf("stream %v: the next turn lacks the answer the client got:\n%s", stream, next)
		}
	}

	// A custom tool call comes back as the custom_tool_call the client got,
	// and the next turn's result answers it.
	tools := `"tools":[{"type":"custom","name":"apply_patch"}]`
	call := postT1(t, h, `{"model":"service","input":"patch it",`+tools+`}`)
	item := gjson.Get(call, "output.0")
	if item.Get("type").Str != "custom_tool_call" || item.Get("call_id").Str != "call_p1" {
		t.Fatalf("the call: %s", call)
	}
	n := len(bodies())
	postT1(t, h, `{"model":"service","previous_response_id":"`+gjson.Get(call, "id").Str+`",`+tools+`,`+
		`"input":[{"type":"custom_tool_call_output","call_id":"call_p1","output":"patched"}]}`)
	next := bodies()[n]
	msgs := gjson.Get(next, "messages").Array()
	var calls, results int
	for _, m := range msgs {
		for _, c := range m.Get("tool_calls").Array() {
			calls++
			if c.Get("id").Str != "call_p1" || c.Get("function.name").Str != "apply_patch" ||
				gjson.Get(c.Get("function.arguments").Str, "input").Str != "*** Begin Patch" {
				t.Errorf("replayed call %s", c.Raw)
			}
		}
		if m.Get("role").Str == "tool" && m.Get("tool_call_id").Str == "call_p1" {
			results++
		}
	}
	if calls != 1 || results != 1 {
		t.Errorf("the next turn has %d calls and %d results; want one of each:\n%s", calls, results, next)
	}
}
