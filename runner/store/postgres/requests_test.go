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

// A base emptied between a request's lookup and its write is not used:
// the insert, which carries only the bytes past the base's, finds it
// emptied (it locks the base's row FOR SHARE) and is refused, and the
// run is written again with its whole request, which reads back byte for
// byte and is stored whole. Both ways a base is emptied: a purge, and a
// delete of its response.
func TestSharedRequestBaseEmptiedDuringWrite(t *testing.T) {
	open, ownBytes := withPeek[int](`SELECT COALESCE(octet_length(request), 0) FROM runs WHERE id = $1`)
	for _, tc := range []struct {
		name  string
		empty func(t *testing.T, s *postgres.Store, base runner.Run)
	}{
		{"Purge", func(t *testing.T, s *postgres.Store, _ runner.Run) {
			if _, err := s.PurgeBefore(t.Context(), 200); err != nil {
				t.Fatal(err)
			}
		}},
		{"DeleteResponse", func(t *testing.T, s *postgres.Store, base runner.Run) {
			if err := s.DeleteResponse(t.Context(), "t1", base.ID); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := open(t)
			s := rs.(*postgres.Store)
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
			if err := s.BeginResponse(t.Context(), runner.ResponseRecord{RunID: base.ID, TenantID: "t1"}, nil); err != nil {
				t.Fatal(err)
			}
			end := int64(100)
			if err := s.Transition(t.Context(), base.ID, runner.Transition{Status: runner.StatusCompleted, EndedAt: &end}); err != nil {
				t.Fatal(err)
			}
			emptied := false
			postgres.SetAfterRequestLookup(s, func() {
				tc.empty(t, s, base)
				emptied = true
			})
			r := start(40)
			postgres.SetAfterRequestLookup(s, nil)
			if !emptied {
				t.Fatal("no lookup ran: the request was not one to share")
			}
			for _, want := range []runner.Run{base, r} {
				got, err := s.GetRun(t.Context(), "t1", want.ID)
				if err != nil {
					t.Fatal(err)
				}
				if want.ID == base.ID {
					want.Request = nil
				}
				if !bytes.Equal(got.Request, want.Request) {
					t.Fatalf("run %s reads back %d bytes, want %d", want.ID, len(got.Request), len(want.Request))
				}
			}
			if n := ownBytes(t, rs, r.ID); n != len(r.Request) {
				t.Fatalf("the turn written after its base was emptied stores %d bytes, want its whole %d", n, len(r.Request))
			}
			// The next turn shares the whole one, and keeps only its own
			// bytes.
			msgs = append(msgs, msgs[0], msgs[1])
			next := start(42)
			got, err := s.GetRun(t.Context(), "t1", next.ID)
			if err != nil || !bytes.Equal(got.Request, next.Request) {
				t.Fatalf("the next turn reads back %d bytes (%v), want %d", len(got.Request), err, len(next.Request))
			}
			if n := ownBytes(t, rs, next.ID); n >= len(next.Request)/4 {
				t.Fatalf("the next turn stores %d of its %d bytes", n, len(next.Request))
			}
		})
	}
}
