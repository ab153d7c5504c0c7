package server

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// A threshold that the current user message alone crosses does not
// compact: nothing precedes it, so a summary would only add to what goes
// upstream (it used to run a compaction of the message and send the
// summary and the message again).
func TestContextManagementCurrentMessageAlone(t *testing.T) {
	h := start(t, compactKeys(t, "k1"))
	long := "tell me about " + strings.TrimSpace(strings.Repeat("blah ", 1500))
	code, reply := h.post("/v1/responses", `{"model":"service","input":"`+long+`","context_management":[{"type":"compaction","compact_threshold":1000}]}`)
	if code != 200 {
		t.Fatalf("%d %.300s", code, reply)
	}
	out := gjson.Get(reply, "output").Array()
	if len(out) != 1 || out[0].Get("type").Str != "message" {
		t.Errorf("output: want the answer alone, no compaction item: %.300s", reply)
	}
	turn := h.run(gjson.Get(reply, "metadata.service.run_id").Str)
	res := h.do("GET", "/runner/v1/runs?session_id="+turn.SessionID, "", "x-service-tenant-id", "t1")
	if runs := gjson.GetBytes(body(t, res), "data.#").Int(); runs != 1 {
		t.Errorf("%d runs in the turn's session; want the turn alone, no compaction run", runs)
	}
	if got := gjson.Get(reply, "usage.input_tokens").Int(); turn.Usage == nil || got != int64(turn.Usage.InputTokens) {
		t.Errorf("usage.input_tokens %d; the turn's run records %+v", got, turn.Usage)
	}
}

// A turn that compacted reports what it cost: its Response's usage is its
// own run's and the compaction run's together, each run recording its own.
func TestContextManagementUsageCountsTheCompaction(t *testing.T) {
	h := start(t, compactKeys(t, "k1"))
	code, reply := h.post("/v1/responses", `{"model":"service","input":`+longTurns("what is my name")+
		`,"context_management":[{"type":"compaction","compact_threshold":1000}]}`)
	if code != 200 || gjson.Get(reply, "output.0.type").Str != "compaction" {
		t.Fatalf("%d %.300s", code, reply)
	}
	cmp := h.run(contract.RunPrefix + strings.TrimPrefix(gjson.Get(reply, "output.0.id").Str, "cmp_"))
	turn := h.run(gjson.Get(reply, "metadata.service.run_id").Str)
	if cmp.Usage == nil || turn.Usage == nil || cmp.Usage.InputTokens == 0 {
		t.Fatalf("usage of the compaction run %+v, of the turn %+v", cmp.Usage, turn.Usage)
	}
	u := gjson.Get(reply, "usage")
	want := runner.Usage{InputTokens: cmp.Usage.InputTokens + turn.Usage.InputTokens,
		OutputTokens: cmp.Usage.OutputTokens + turn.Usage.OutputTokens}
	want.TotalTokens = want.InputTokens + want.OutputTokens
	if got := (runner.Usage{InputTokens: int(u.Get("input_tokens").Int()), OutputTokens: int(u.Get("output_tokens").Int()),
		TotalTokens: int(u.Get("total_tokens").Int())}); got != want {
		t.Errorf("the turn's usage %+v; want the compaction's %+v and the turn's %+v together", got, *cmp.Usage, *turn.Usage)
	}
}

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
