package runner_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/schema"
)

func TestRunCompletesWithUsage(t *testing.T) {
	e := newEnv(t)
	sp := spec("hello   world", false)
	sp.RequestID, sp.CorrelationID = "req-9", "corr-9"
	h, err := e.svc.Start(t.Context(), sp)
	if err != nil {
		t.Fatal(err)
	}
	created := h.Run()
	if !strings.HasPrefix(created.ID, "run_") || !strings.HasPrefix(created.SessionID, "sess_") ||
		!strings.HasPrefix(created.ThreadID, "thread_") {
		t.Fatalf("ids %q %q %q lack their prefixes", created.ID, created.SessionID, created.ThreadID)
	}
	if created.Status != runner.StatusRunning || created.StartedAt == nil || created.Object != "run" {
		t.Fatalf("created run = %+v", created)
	}
	// The row exists while the run is in flight.
	if r := e.get(t, created.ID); r.Status != runner.StatusRunning && r.Status != runner.StatusCompleted {
		t.Fatalf("stored run is %s", r.Status)
	}

	res, deltas, err := finish(h)
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if len(deltas) != 0 {
		t.Fatalf("non-streaming run emitted %q", deltas)
	}
	if res.Text != "You said: hello world" || res.FinishReason != "stop" {
		t.Fatalf("result %+v", res)
	}
	r := e.get(t, created.ID)
	wantState(t, r, runner.StatusCompleted, "")
	want := runner.Usage{InputTokens: 2, OutputTokens: 4, TotalTokens: 6}
	if r.Usage == nil || *r.Usage != want {
		t.Fatalf("usage %+v, want %+v", r.Usage, want)
	}
	if r.EndedAt == nil || r.Output != res.Text || r.Error != nil || r.Attempts != 1 {
		t.Fatalf("completed run = %+v", r)
	}
	if r.RequestID != "req-9" || r.CorrelationID != "corr-9" || r.Actor != sp.Actor || r.Endpoint != sp.Endpoint {
		t.Fatalf("attribution lost: %+v", r)
	}
	var stored runner.Request
	if err := json.Unmarshal(r.Request, &stored); err != nil || stored.Input[0].Content != "hello   world" {
		t.Fatalf("stored request %s (%v)", r.Request, err)
	}
	if e.svc.InFlight() != 0 {
		t.Fatalf("InFlight = %d after Finish", e.svc.InFlight())
	}
}

func TestStreamingEventsInOrder(t *testing.T) {
	e := newEnv(t, withDelay(time.Millisecond))
	h, err := e.svc.Start(t.Context(), spec("one two three", true))
	if err != nil {
		t.Fatal(err)
	}
	res, deltas, err := finish(h)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"You", " said:", " one", " two", " three"}; !slices.Equal(deltas, want) {
		t.Fatalf("deltas %q, want %q", deltas, want)
	}
	if strings.Join(deltas, "") != res.Text {
		t.Fatalf("deltas do not add up to the text %q", res.Text)
	}
}

func TestInstructionsCountAsInput(t *testing.T) {
	e := newEnv(t)
	sp := spec("hi", false)
	sp.Request.Instructions = "answer in one line"
	h, err := e.svc.Start(t.Context(), sp)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := finish(h); err != nil {
		t.Fatal(err)
	}
	if u := e.get(t, h.Run().ID).Usage; u == nil || u.InputTokens != 5 {
		t.Fatalf("usage %+v, want 5 input tokens (4 instruction words + 1)", u)
	}
}

const answerSchema = `{"type":"object","properties":{"answer":{"type":"string"},"score":{"type":"integer","minimum":1,"maximum":5}},"required":["answer","score"],"additionalProperties":false}`

func TestStructuredOutputIsValidated(t *testing.T) {
	e := newEnv(t)
	sp := spec("rate this", true)
	sp.Request.OutputSchema = []byte(answerSchema)
	h, err := e.svc.Start(t.Context(), sp)
	if err != nil {
		t.Fatal(err)
	}
	res, deltas, err := finish(h)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := schema.Compile([]byte(answerSchema))
	if err := s.Validate([]byte(strings.Join(deltas, ""))); err != nil {
		t.Fatalf("streamed document %q: %v", deltas, err)
	}
	if res.Text != `{"answer":"rate this","score":2}` {
		t.Fatalf("text %s", res.Text)
	}
	r := e.get(t, h.Run().ID)
	wantState(t, r, runner.StatusCompleted, "")
	if r.Output != res.Text {
		t.Fatalf("stored output %q", r.Output)
	}
}

func TestInvalidOutputFailsAndIsNotStreamed(t *testing.T) {
	e := newEnv(t)
	sp := spec("/invalid please", true)
	sp.Request.OutputSchema = []byte(answerSchema)
	h, err := e.svc.Start(t.Context(), sp)
	if err != nil {
		t.Fatal(err)
	}
	_, deltas, err := finish(h)
	wantErr(t, err, runner.ErrOutputInvalid)
	if len(deltas) != 0 {
		t.Fatalf("invalid output reached the stream: %q", deltas)
	}
	r := e.get(t, h.Run().ID)
	wantState(t, r, runner.StatusFailed, runner.ReasonOutputInvalid)
	if r.Error == nil || r.Error.Code != runner.ReasonOutputInvalid || !strings.Contains(r.Error.Message, "missing properties") {
		t.Fatalf("error %+v", r.Error)
	}
	if r.Attempts != 2 {
		t.Fatalf("attempts %d, want 2 (one repair attempt)", r.Attempts)
	}
}

func TestInvalidSchemaCreatesNoRun(t *testing.T) {
	e := newEnv(t)
	sp := spec("hi", false)
	sp.Request.OutputSchema = []byte(`{"type":"objekt"}`)
	h, err := e.svc.Start(t.Context(), sp)
	wantErr(t, err, runner.ErrInvalidRequest)
	if h != nil {
		t.Fatal("handle returned with an error")
	}
	if n := e.countRuns(t); n != 0 {
		t.Fatalf("%d runs recorded for a refused request", n)
	}
	if e.svc.InFlight() != 0 {
		t.Fatalf("InFlight = %d", e.svc.InFlight())
	}
}

func TestProviderFailure(t *testing.T) {
	e := newEnv(t)
	h, err := e.svc.Start(t.Context(), spec("/fail now", false))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = finish(h)
	wantErr(t, err, runner.ErrProvider)
	r := e.get(t, h.Run().ID)
	wantState(t, r, runner.StatusFailed, runner.ReasonProviderError)
	if r.Error == nil || r.Error.Code != runner.ReasonProviderError || !strings.Contains(r.Error.Message, "simulated failure") {
		t.Fatalf("error %+v", r.Error)
	}
	if r.EndedAt == nil {
		t.Fatal("failed run has no ended_at")
	}
}

func TestProviderFailureMidStream(t *testing.T) {
	e := newEnv(t)
	h, err := e.svc.Start(t.Context(), spec("/fail-mid and more words", true))
	if err != nil {
		t.Fatal(err)
	}
	_, deltas, err := finish(h)
	wantErr(t, err, runner.ErrProvider)
	if len(deltas) != 3 {
		t.Fatalf("deltas %q, want 3 before the failure", deltas)
	}
	wantState(t, e.get(t, h.Run().ID), runner.StatusFailed, runner.ReasonProviderError)
}

// codedErr is what a later stage (a translate plugin) fails a run with.
type codedErr struct{}

func (codedErr) Error() string        { return "plugin trapped" }
func (codedErr) RunErrorCode() string { return runner.ReasonPluginError }

func TestOwnerErrorsAreClassified(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		err    error
		reason string
	}{
		{codedErr{}, runner.ReasonPluginError},
		{bytes.ErrTooLarge, runner.ReasonFailed},
	}
	for _, c := range cases {
		h, err := e.svc.Start(t.Context(), spec("hi", false))
		if err != nil {
			t.Fatal(err)
		}
		res, _ := h.Wait()
		if got := h.Finish(&res, c.err); got != c.err {
			t.Fatalf("Finish returned %v, want the original %v", got, c.err)
		}
		r := e.get(t, h.Run().ID)
		wantState(t, r, runner.StatusFailed, c.reason)
		if r.Error == nil || r.Error.Code != c.reason || r.Error.Message != c.err.Error() {
			t.Fatalf("error %+v", r.Error)
		}
	}
}

func TestMarkInterruptedOnReopen(t *testing.T) {
	e := newEnv(t)
	started := int64(1_700_000_000)
	crashed := &runner.Run{ID: runner.NewID("run_"), Status: runner.StatusRunning, TenantID: "acme", CreatedAt: started, StartedAt: &started}
	if err := e.store.StartRun(t.Context(), crashed, false, false); err != nil {
		t.Fatal(err)
	}
	e.store.Close()

	var logs bytes.Buffer
	e2 := openEnv(t, e.path, withConfig(func(c *runner.ServiceConfig) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	}))
	r := e2.get(t, crashed.ID)
	wantState(t, r, runner.StatusFailed, runner.ReasonInterrupted)
	if r.EndedAt == nil || r.Error == nil || r.Error.Code != runner.ReasonInterrupted {
		t.Fatalf("interrupted run = %+v", r)
	}
	if !strings.Contains(logs.String(), "count=1") {
		t.Fatalf("start-up log does not report the count: %s", logs.String())
	}
}

func TestNewServiceNeedsStoreAndAgent(t *testing.T) {
	if _, err := runner.NewService(t.Context(), runner.ServiceConfig{}); err == nil {
		t.Fatal("NewService accepted an empty config")
	}
}

func TestFixedClock(t *testing.T) {
	at := time.Unix(1_750_000_000, 0)
	e := newEnv(t, withConfig(func(c *runner.ServiceConfig) { c.Now = func() time.Time { return at } }))
	h, err := e.svc.Start(t.Context(), spec("hi", false))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := finish(h); err != nil {
		t.Fatal(err)
	}
	r := e.get(t, h.Run().ID)
	if r.CreatedAt != at.Unix() || *r.StartedAt != at.Unix() || *r.EndedAt != at.Unix() {
		t.Fatalf("times %d %d %d, want %d", r.CreatedAt, *r.StartedAt, *r.EndedAt, at.Unix())
	}
}
