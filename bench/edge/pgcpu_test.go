package main

import (
	"context"
	"testing"

	"github.com/runedge/runedge/runner/store/postgres/pgtest"
)

// TestCheckpointFlushesNow: the checkpoint bench-edge takes after a
// PostgreSQL target's scenario is one the server runs at once and counts
// as requested, not a timed one left for later.
func TestCheckpointFlushesNow(t *testing.T) {
	ctx := context.Background()
	pg, err := dialPG(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.close()
	if _, err := pg.conn.Exec(ctx, "CREATE TEMP TABLE dirty AS SELECT g FROM generate_series(1, 1000) g"); err != nil {
		t.Fatal(err)
	}
	before, err := pg.checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after, err := pg.checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Fatalf("checkpoints requested %d then %d: the second CHECKPOINT was not run", before, after)
	}
}
