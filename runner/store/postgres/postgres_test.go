package postgres_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/postgres"
	"github.com/runedge/runedge/runner/store/postgres/pgtest"
	"github.com/runedge/runedge/runner/store/sqlite"
	"github.com/runedge/runedge/runner/store/storetest"
)

func openTemp(t testing.TB) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), pgtest.Schema(t), postgres.Options{CommitWindow: postgres.DefaultCommitWindow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestLeases(t *testing.T) {
	storetest.Leases(t, func(t *testing.T) runner.Store { return openTemp(t) })
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) runner.Store { return openTemp(t) })
}

// Both drivers number their migrations alike: a column added to one under
// version N is added to the other under N.
func TestSameSchemaVersionAsSQLite(t *testing.T) {
	if postgres.SchemaVersion() != sqlite.SchemaVersion() {
		t.Fatalf("postgres schema version %d, sqlite %d: port the missing migration", postgres.SchemaVersion(), sqlite.SchemaVersion())
	}
}

// Hosts starting at once on an empty database: one migrates, the others
// wait on the advisory lock and find the schema current.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	dsn := pgtest.Schema(t)
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			s, err := postgres.Open(t.Context(), dsn, postgres.Options{})
			if err != nil {
				errs <- err
				return
			}
			s.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s, err := postgres.Open(t.Context(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := &runner.Run{ID: runner.NewID("run_"), Status: runner.StatusRunning, TenantID: "acme", CreatedAt: 1, HostID: "h"}
	if err := s.StartRun(t.Context(), r, false, false); err != nil {
		t.Fatal(err)
	}
}

// A wrong password is refused at Open, and the message carries no password.
func TestOpenRefusesWrongPassword(t *testing.T) {
	u, err := url.Parse(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "not-the-password")
	_, err = postgres.Open(t.Context(), u.String(), postgres.Options{})
	if err == nil {
		t.Fatal("Open succeeded with a wrong password")
	}
	if strings.Contains(err.Error(), "not-the-password") {
		t.Fatalf("error shows the password: %v", err)
	}
	t.Log(err)
}

func TestOpenRefusesUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, err := postgres.Open(ctx, "postgres://u:secretpw@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", postgres.Options{})
	if err == nil {
		t.Fatal("Open succeeded against a closed port")
	}
	if !errors.Is(err, runner.ErrUnavailable) || strings.Contains(err.Error(), "secretpw") {
		t.Fatalf("err = %v; want ErrUnavailable without the password", err)
	}
	if _, err := postgres.Open(ctx, "postgres://u:secretpw@host:notaport/db", postgres.Options{}); err == nil || strings.Contains(err.Error(), "secretpw") {
		t.Fatalf("unparsable DSN: err = %v", err)
	}
}

// A cancel relayed through one store reaches the listener of the named
// host only.
func TestRelayCancel(t *testing.T) {
	dsn := pgtest.Schema(t)
	a, err := postgres.Open(t.Context(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(t.Context(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got := make(chan string, 4)
	if err := a.ListenCancels(t.Context(), "host-a", func(id string) { got <- "a:" + id }); err != nil {
		t.Fatal(err)
	}
	if err := b.ListenCancels(t.Context(), "host-b", func(id string) { got <- "b:" + id }); err != nil {
		t.Fatal(err)
	}
	if err := b.RelayCancel(t.Context(), "host-a", "run_1"); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-got:
		if v != "a:run_1" {
			t.Fatalf("delivered %q, want a:run_1", v)
		}
	case <-time.After(time.Second):
		t.Fatal("relayed cancel not delivered within 1s")
	}
	select {
	case v := <-got:
		t.Fatalf("also delivered %q", v)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestHistory(t *testing.T) {
	storetest.History(t, func(t *testing.T) runner.Store { return openTemp(t) })
}

func TestConversations(t *testing.T) {
	storetest.Conversations(t, func(t *testing.T) runner.Store { return openTemp(t) })
}

func TestDedup(t *testing.T) {
	open, peek := withPeek[int](`SELECT count(*) FROM response_items WHERE run_id = $1`)
	storetest.Dedup(t, open, peek)
}

func TestSharedRequests(t *testing.T) {
	open, peek := withPeek[int](`SELECT COALESCE(octet_length(request), 0) FROM runs WHERE id = $1`)
	storetest.SharedRequests(t, open, peek)
}

func TestOutputOnce(t *testing.T) {
	open, peek := withPeek[string](`SELECT output FROM runs WHERE id = $1`)
	storetest.OutputOnce(t, open, peek)
}

// withPeek returns a suite's store opener (a schema of its own, the
// default commit window) and its look at a run's rows: query, given the
// run id, on a connection of the store's own schema.
func withPeek[T any](query string) (func(*testing.T) runner.Store, func(*testing.T, runner.Store, string) T) {
	dsns := map[runner.Store]string{}
	open := func(t *testing.T) runner.Store {
		dsn := pgtest.Schema(t)
		s, err := postgres.Open(t.Context(), dsn, postgres.Options{CommitWindow: postgres.DefaultCommitWindow})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		dsns[s] = dsn
		return s
	}
	peek := func(t *testing.T, s runner.Store, runID string) T {
		conn, err := pgx.Connect(t.Context(), dsns[s])
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var v T
		if err := conn.QueryRow(t.Context(), query, runID).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	return open, peek
}

func TestHistoryProbe(t *testing.T) {
	storetest.HistoryProbe(t, func(t *testing.T) runner.Store { return openTemp(t) })
}

func TestForgetGeneration(t *testing.T) {
	storetest.ForgetGeneration(t, func(t *testing.T) runner.Store { return openTemp(t) })
}

func TestResponseLink(t *testing.T) {
	storetest.ResponseLink(t, func(t *testing.T) runner.Store { return openTemp(t) })
}
