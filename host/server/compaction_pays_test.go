package server

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner"
)

// Codex's remote compaction puts the compaction item last, after the user
// messages POST /v1/responses/compact kept. Its summary reaches the
// upstream before the turns it replaces, never as a system message after
// the last user message (which several chat templates refuse).
func TestCompactionSummaryBeforeTheTurns(t *testing.T) {
	up := newScripted(t, wholeOf("the summary"), wholeOf("the answer"))
	h := start(t, func(c *config.Config) {
		compactKeys(t, "k1")(c)
		viaOpenAI(up.srv.URL, nil)(c)
	})
	code, compacted := h.post("/v1/responses/compact", `{"model":"service","input":[{"role":"user","content":"first question"},`+
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"first answer"}]},{"role":"user","content":"second question"}]}`)
	out := gjson.Get(compacted, "output").Array()
	if code != 200 || len(out) != 3 || out[2].Get("type").Str != "compaction" {
		t.Fatalf("compact: %d %.300s", code, compacted)
	}
	kept := gjson.Get(compacted, "output").Raw
	for _, c := range []struct{ name, input string }{
		{"the compaction output as it is", kept},
		{"then a new question", kept[:len(kept)-1] + `,{"role":"user","content":"third question"}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(up.requests())
			if code, reply := h.post("/v1/responses", `{"model":"service","store":false,"instructions":"be brief","input":`+c.input+`}`); code != 200 {
				t.Fatalf("%d %.300s", code, reply)
			}
			reqs := up.requests()
			if len(reqs) != before+1 {
				t.Fatalf("%d upstream requests; want 1", len(reqs)-before)
			}
			msgs := gjson.Get(reqs[len(reqs)-1], "messages").Array()
			summary, firstUser, lastUser := -1, -1, -1
			for i, m := range msgs {
				switch {
				case m.Get("role").Str == "user":
					if firstUser < 0 {
						firstUser = i
					}
					lastUser = i
				case strings.Contains(m.Get("content").String(), runner.CompactedContextPrefix):
					summary = i
				}
			}
			if summary < 0 || firstUser < 0 || summary > firstUser {
				t.Errorf("the summary is message %d, the first user message %d; want the summary first: %s", summary, firstUser, gjson.Get(reqs[len(reqs)-1], "messages").Raw)
			}
			for _, m := range msgs[lastUser+1:] {
				if m.Get("role").Str == "system" {
					t.Errorf("a system message after the last user message: %s", gjson.Get(reqs[len(reqs)-1], "messages").Raw)
				}
			}
		})
	}
}
