package main

import (
	"context"
	"testing"

	"github.com/runedge/runedge/runner/store/postgres/pgtest"
)

// TestVacuumRunsNow: the upkeep bench-edge does after a PostgreSQL
// target's scenario is a VACUUM the server runs at once, over every
// table, not one left to autovacuum for a later minute.
func TestVacuumRunsNow(t *testing.T) {
	ctx := context.Background()
	pg, err := dialPG(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.close()
	if _, err := pg.conn.Exec(ctx, "CREATE TABLE bench_vacuum_probe AS SELECT g FROM generate_series(1, 1000) g"); err != nil {
		t.Fatal(err)
	}
	defer pg.conn.Exec(context.Background(), "DROP TABLE bench_vacuum_probe")
	var before int64
	if err := pg.conn.QueryRow(ctx, "SELECT coalesce(sum(vacuum_count), 0)::bigint FROM pg_stat_user_tables").Scan(&before); err != nil {
		t.Fatal(err)
	}
	after, err := pg.vacuum(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Fatalf("tables vacuumed by hand %d then %d: VACUUM did not run", before, after)
	}
	var probe, analyzed int64
	if err := pg.conn.QueryRow(ctx, "SELECT vacuum_count, analyze_count FROM pg_stat_user_tables WHERE relname = 'bench_vacuum_probe'").Scan(&probe, &analyzed); err != nil {
		t.Fatal(err)
	}
	if probe < 1 || analyzed < 1 {
		t.Fatalf("the new table was vacuumed %d and analyzed %d times: want both", probe, analyzed)
	}
}
