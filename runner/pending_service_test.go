package runner_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/runedge/runedge/internal/jsonfast"
	"github.com/runedge/runedge/runner"
)

// pendingAgent is agentFunc saying it takes pending texts.
type pendingAgent struct{ agentFunc }

func (pendingAgent) TakesPendingTexts() bool { return true }

// TestPendingTextsDecodedForOtherAgents: a run's agent that does not say
// it reads texts through Message.Text (runner.PendingTextAgent) is given
// every pending text decoded, and one that says so is given them pending.
// It fails when a pending text reaches an agent that reads Content.
func TestPendingTextsDecodedForOtherAgents(t *testing.T) {
	lit := `"a \"quoted\" \ud83d\ude00 text\n\u0000 <b>"`
	var text string
	if err := json.Unmarshal([]byte(lit), &text); err != nil {
		t.Fatal(err)
	}
	for _, takes := range []bool{false, true} {
		var seen []runner.Message
		f := agentFunc(func(_ context.Context, req runner.Request, _ func(runner.Event) error) (runner.Result, error) {
			seen = append([]runner.Message(nil), req.Input...)
			return runner.Result{Text: "ok", FinishReason: "stop", Attempts: 1}, nil
		})
		var a runner.Agent = f
		if takes {
			a = pendingAgent{f}
		}
		svc, _ := serviceWith(t, a)
		n, marshaled, ok := jsonfast.PendingLiteral(jsonfast.Value(lit))
		if !ok {
			t.Fatal("not kept pending")
		}
		sp := spec("", false)
		sp.Request.Input[0].SetContentPending(lit, n, marshaled)
		h, err := svc.Start(t.Context(), sp)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := finish(h); err != nil {
			t.Fatal(err)
		}
		if len(seen) != 1 || seen[0].Text() != text || seen[0].ContentPending() != takes || !takes && seen[0].Content != text {
			t.Errorf("taking pending texts %v: the agent was given %+v (pending %v)", takes, seen, len(seen) == 1 && seen[0].ContentPending())
		}
	}
}
