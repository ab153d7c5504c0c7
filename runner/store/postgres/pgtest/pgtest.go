// Package pgtest gives tests a real PostgreSQL: the DSN of the cluster
// `make test` starts (scripts/testdb.sh) and a fresh, empty schema per
// test, so tests of one run never see each other's rows.
package pgtest

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/runedge/runedge/runner"
)

// EnvDSN is the variable holding the test cluster's DSN.
const EnvDSN = "RUNEDGE_TEST_PG_DSN"

// DSN returns the test cluster's DSN. Without one the test fails under
// CI=true (a CI run must never pass by skipping PostgreSQL) and is skipped
// otherwise, saying how to get one.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(EnvDSN)
	if dsn == "" {
		msg := EnvDSN + " is not set: run `make test`, or start a cluster with scripts/testdb.sh start DIR and export its DSN"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dsn
}

// Schema creates a new empty schema and returns a DSN whose connections
// use it (search_path), dropping it when the test ends.
func Schema(t testing.TB) string {
	t.Helper()
	base := DSN(t)
	name := "t_" + strings.TrimPrefix(runner.NewID("s_"), "s_")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			return
		}
		defer c.Close(ctx)
		c.Exec(ctx, "DROP SCHEMA "+name+" CASCADE")
	})
	return WithParam(t, base, "search_path", name)
}

// WithParam returns dsn (URL form) with one query parameter set.
func WithParam(t testing.TB, dsn, key, value string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("pgtest: %s is not a URL DSN: %v", EnvDSN, err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}
