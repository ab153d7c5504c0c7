package postgres_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/postgres"
)

// A base purged between a request's lookup and its write is not used:
// the insert finds it emptied (it locks the base's row FOR SHARE) and
// keeps the whole request it carries, which reads back byte for byte.
func TestSharedRequestBasePurgedDuringWrite(t *testing.T) {
	s := openTemp(t)
	var msgs []string
	for i := range 40 {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"turn %d: %s"}`, i, strings.Repeat("set the content type; ", 25)))
	}
	start := func(n int) runner.Run {
		t.Helper()
		req := []byte(`{"input":[`)
		var bounds []int
		for i, m := range msgs[:n] {
			if i > 0 {
				req = append(req, ',')
			}
			req = append(req, m...)
			bounds = append(bounds, len(req))
		}
		r := &runner.Run{ID: runner.NewID(contract.RunPrefix), Status: runner.StatusRunning, TenantID: "t1",
			Endpoint: contract.EndpointChat, CreatedAt: 1, Request: append(req, `],"stream":false}`...), RequestBounds: bounds}
		r.SessionID, r.ThreadID = contract.OwnSessionID(r.ID), contract.OwnThreadID(r.ID)
		want := *r
		if err := s.StartRun(t.Context(), r, false, false); err != nil {
			t.Fatal(err)
		}
		return want
	}
	base := start(38)
	end := int64(100)
	if err := s.Transition(t.Context(), base.ID, runner.Transition{Status: runner.StatusCompleted, EndedAt: &end}); err != nil {
		t.Fatal(err)
	}
	purged := false
	postgres.SetAfterRequestLookup(s, func() {
		if _, err := s.PurgeBefore(t.Context(), 200); err != nil {
			t.Fatal(err)
		}
		purged = true
	})
	r := start(40)
	postgres.SetAfterRequestLookup(s, nil)
	if !purged {
		t.Fatal("no lookup ran: the request was not one to share")
	}
	for _, id := range []string{base.ID, r.ID} {
		got, err := s.GetRun(t.Context(), "t1", id)
		if err != nil {
			t.Fatal(err)
		}
		want := r.Request
		if id == base.ID {
			want = nil
		}
		if !bytes.Equal(got.Request, want) {
			t.Fatalf("run %s reads back %d bytes, want %d", id, len(got.Request), len(want))
		}
	}
	// The next turn shares the whole one.
	msgs = append(msgs, msgs[0], msgs[1])
	next := start(42)
	got, err := s.GetRun(t.Context(), "t1", next.ID)
	if err != nil || !bytes.Equal(got.Request, next.Request) {
		t.Fatalf("the next turn reads back %d bytes (%v), want %d", len(got.Request), err, len(next.Request))
	}
}
