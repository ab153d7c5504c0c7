package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/postgres"
	"github.com/runedge/runedge/runner/store/postgres/pgtest"
)

// A base emptied between a request's lookup and its write is not used:
// the insert, which carries only the bytes past the base's, finds it
// emptied (it locks the base's row FOR SHARE) and is refused, and the
// run is written again with its whole request, which reads back byte for
// byte and is stored whole. Both ways a base is emptied (a purge, a
// delete of its response), by the host that writes the run and by
// another.
func TestSharedRequestBaseEmptiedDuringWrite(t *testing.T) {
	for _, host := range []string{"SameHost", "OtherHost"} {
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
			t.Run(host+"/"+tc.name, func(t *testing.T) {
				dsn := pgtest.Schema(t)
				open := func() *postgres.Store {
					s, err := postgres.Open(t.Context(), dsn, postgres.Options{CommitWindow: postgres.DefaultCommitWindow})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { s.Close() })
					return s
				}
				first := open()
				second := first
				if host == "OtherHost" {
					second = open()
				}
				ownBytes := func(id string) int {
					conn, err := pgx.Connect(t.Context(), dsn)
					if err != nil {
						t.Fatal(err)
					}
					defer conn.Close(context.Background())
					var n int
					if err := conn.QueryRow(t.Context(), `SELECT COALESCE(octet_length(request), 0) FROM runs WHERE id = $1`, id).Scan(&n); err != nil {
						t.Fatal(err)
					}
					return n
				}
				var msgs []string
				for i := range 40 {
					msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"turn %d: %s"}`, i, strings.Repeat("set the content type; ", 25)))
				}
				start := func(s *postgres.Store, n int) runner.Run { return startShared(t, s, msgs[:n]) }
				base := start(first, 38)
				if err := first.BeginResponse(t.Context(), runner.ResponseRecord{RunID: base.ID, TenantID: "t1"}, nil); err != nil {
					t.Fatal(err)
				}
				end := int64(100)
				if err := first.Transition(t.Context(), base.ID, runner.Transition{Status: runner.StatusCompleted, EndedAt: &end}); err != nil {
					t.Fatal(err)
				}
				// The host that wrote the base finds it in its memory,
				// is refused, and asks the database, which has none
				// left; another host asks the database first.
				var lookups []bool // cached or not
				postgres.SetAfterRequestLookup(second, func(cached bool) {
					if len(lookups) == 0 {
						tc.empty(t, first, base)
					}
					lookups = append(lookups, cached)
				})
				r := start(second, 40)
				postgres.SetAfterRequestLookup(second, nil)
				want := []bool{false}
				if host == "SameHost" {
					want = []bool{true, false}
				}
				if !slices.Equal(lookups, want) {
					t.Fatalf("lookups (from memory or not) %v, want %v", lookups, want)
				}
				for _, want := range []runner.Run{base, r} {
					got, err := second.GetRun(t.Context(), "t1", want.ID)
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
				if n := ownBytes(r.ID); n != len(r.Request) {
					t.Fatalf("the turn written after its base was emptied stores %d bytes, want its whole %d", n, len(r.Request))
				}
				// The next turns, on either host, share the whole one or
				// the turn after it, each keeping only its own bytes; the
				// writing host finds them in its memory, and a host whose
				// memory holds the emptied base is refused once and asks
				// the database.
				for i, s := range []*postgres.Store{second, first} {
					msgs = append(msgs, msgs[len(msgs)-2], msgs[len(msgs)-1])
					lookups = nil
					postgres.SetAfterRequestLookup(s, func(cached bool) { lookups = append(lookups, cached) })
					next := start(s, len(msgs))
					postgres.SetAfterRequestLookup(s, nil)
					want := []bool{true}
					if i == 1 && host == "OtherHost" {
						want = []bool{true, false}
					}
					if !slices.Equal(lookups, want) {
						t.Errorf("turn %d: lookups (from memory or not) %v, want %v", i, lookups, want)
					}
					got, err := s.GetRun(t.Context(), "t1", next.ID)
					if err != nil || !bytes.Equal(got.Request, next.Request) {
						t.Fatalf("the next turn reads back %d bytes (%v), want %d", len(got.Request), err, len(next.Request))
					}
					if n := ownBytes(next.ID); n >= len(next.Request)/4 {
						t.Fatalf("the next turn stores %d of its %d bytes", n, len(next.Request))
					}
				}
			})
		}
	}
}

// A turn that resends a 230 KB history sends the database the bytes past
// its base's, not the whole request for the server to cut: counted on
// the wire, through a relay between the store and PostgreSQL.
func TestSharedRequestSendsItsRestOnly(t *testing.T) {
	relay := pgtest.NewRelay(t, pgtest.Schema(t))
	s, err := postgres.Open(t.Context(), relay.DSN, postgres.Options{CommitWindow: postgres.DefaultCommitWindow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var msgs []string
	for i := range 400 {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"turn %d: %s"}`, i, strings.Repeat("the handler sets its content type; ", 15)))
	}
	start := func(n int) runner.Run { return startShared(t, s, msgs[:n]) }
	base := start(398)
	if len(base.Request) < 200<<10 {
		t.Fatalf("the base's request is %d bytes, want an agent-sized one", len(base.Request))
	}
	sent := relay.Sent()
	r := start(400)
	if n := relay.Sent() - sent; n > int64(len(r.Request))/8 {
		t.Errorf("a turn resending a %d-byte request sent %d bytes to the database", len(r.Request), n)
	}
	got, err := s.GetRun(t.Context(), "t1", r.ID)
	if err != nil || !bytes.Equal(got.Request, r.Request) {
		t.Fatalf("the turn reads back %d bytes (%v), want %d", len(got.Request), err, len(r.Request))
	}
}

// startShared starts a run of tenant t1 whose chat request holds msgs,
// with its messages' bounds (a request the store may keep by reference),
// and returns it as it was given.
func startShared(t *testing.T, s *postgres.Store, msgs []string) runner.Run {
	t.Helper()
	req := []byte(`{"input":[`)
	var bounds []int
	for i, m := range msgs {
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
