package server

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/plugins/plugintest"
	"github.com/runedge/runedge/runner"
)

// A plugin that panics, loops, blows its memory limit or returns garbage
// fails only that request — 500 plugin_error naming the plugin, the run
// recorded failed with the plugin error — and the next request is served.
func TestPluginFaultsFailOnlyThatRequest(t *testing.T) {
	faulty := plugintest.Build(t, "./testdata/faulty")
	h := start(t, func(c *config.Config) {
		c.Chains[config.ChainChat] = config.Chain{MapRequest: faulty, Translate: faulty}
		c.Plugins.CallTimeout = config.Dur(100 * time.Millisecond)
		c.Plugins.MaxMemoryPages = 512 // 32 MiB
	})
	for _, fault := range []string{"panic", "loop", "memory", "garbage"} {
		t.Run(fault, func(t *testing.T) {
			res := h.do("POST", "/v1/chat/completions", `{"model":"service","messages":[{"role":"user","content":"`+fault+` now"}]}`)
			b := wantError(t, res, 500, "server_error", "plugin_error")
			if msg := gjson.GetBytes(b, "error.message").Str; !strings.Contains(msg, "plugin faulty") {
				t.Fatalf("the error does not name the plugin: %s", msg)
			}
			r := h.run(checkRunHeaders(t, res.Header))
			if r.Status != runner.StatusFailed || r.StatusReason != "plugin_error" || r.Error == nil {
				t.Fatalf("run recorded %+v", r)
			}
			if ok := h.do("POST", "/v1/chat/completions", chatBody); ok.StatusCode != 200 {
				t.Fatalf("the request after a %s fault: %d %s", fault, ok.StatusCode, body(t, ok))
			}
		})
	}
}

// A plugin may indent what map_result returns (plugins/ABI.md allows it). The
// host compacts it before framing: an SSE data line ends at the first
// newline, so an indented Response cut response.completed short.
func TestIndentedPluginReplyIsCompacted(t *testing.T) {
	faulty := plugintest.Build(t, "./testdata/faulty")
	h := start(t, func(c *config.Config) {
		c.Chains[config.ChainChat] = config.Chain{MapRequest: faulty, Translate: faulty}
		c.Chains[config.ChainResponses] = config.Chain{MapRequest: faulty, Translate: faulty}
	})
	t.Run("responses stream", func(t *testing.T) {
		res := h.do("POST", "/v1/responses", `{"model":"service","input":"indent me","stream":true}`)
		if res.StatusCode != 200 {
			t.Fatalf("status %d: %s", res.StatusCode, body(t, res))
		}
		defer res.Body.Close()
		evs := readEvents(t, res.Body)
		if len(evs) == 0 {
			t.Fatal("no events")
		}
		for _, ev := range []sseEvent{evs[0], evs[len(evs)-1]} {
			if !gjson.Valid(ev.Data) {
				t.Fatalf("%s: data is not JSON: %q", ev.Event, ev.Data)
			}
		}
		last := evs[len(evs)-1]
		if last.Event != "response.completed" || gjson.Get(last.Data, "response.status").Str != "completed" ||
			!strings.Contains(gjson.Get(last.Data, "response.output.0.content.0.text").Str, "indent me") {
			t.Fatalf("last event %s: %s", last.Event, last.Data)
		}
	})
	t.Run("chat", func(t *testing.T) {
		res := h.do("POST", "/v1/chat/completions", `{"model":"service","messages":[{"role":"user","content":"indent me"}]}`)
		b := body(t, res)
		if res.StatusCode != 200 || bytes.Contains(b, []byte("\n  ")) ||
			!strings.Contains(gjson.GetBytes(b, "choices.0.message.content").Str, "indent me") {
			t.Fatalf("status %d: %s", res.StatusCode, b)
		}
	})
}
