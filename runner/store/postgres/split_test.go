package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/runedge/runedge/runner/store/postgres/pgtest"
)

// A group commit of more than splitBytes goes out in parts on one
// connection inside one transaction: every statement runs, in order, each
// check sees its own result, and a statement that fails in the last part
// takes the first parts' writes with it, as one implicit transaction did.
func TestLargeBatchCommitsInPartsAtomically(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, pgtest.Schema(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.pool.Exec(ctx, `CREATE TABLE split_rows (n INTEGER PRIMARY KEY, body TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("x", 229<<10) // an agent-sized request
	fill := func(p *pipe, ns ...int) *[]int64 {
		seen := new([]int64)
		for _, n := range ns {
			p.check(func(tag pgconn.CommandTag) error {
				*seen = append(*seen, tag.RowsAffected())
				return nil
			}, `INSERT INTO split_rows (n, body) VALUES ($1, $2)`, n, body)
		}
		return seen
	}
	count := func() int {
		var n int
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM split_rows`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	d := txDriver{s.pool}

	p := &pipe{}
	seen := fill(p, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	if p.bytes <= 2*splitBytes {
		t.Fatalf("the batch is %d bytes: not enough for three parts", p.bytes)
	}
	if err := d.Commit(ctx, p); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != 9 || len(*seen) != 9 {
		t.Fatalf("%d rows, %d checks run; want 9 and 9", got, len(*seen))
	}

	// The last statement repeats a key: nothing of the batch stays.
	p = &pipe{}
	fill(p, 10, 11, 12, 13, 14, 15, 1)
	err = d.Commit(ctx, p)
	if err == nil {
		t.Fatal("a batch with a duplicate key committed")
	}
	if got := count(); got != 9 {
		t.Fatalf("%d rows after the failed batch, want 9: its first parts committed", got)
	}
	// The connection it ran on went back to the pool usable.
	for range 4 {
		var one int
		if err := s.pool.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil {
			t.Fatal(err)
		}
	}
	var tx pgx.Tx
	if tx, err = s.pool.Begin(context.WithoutCancel(ctx)); err != nil {
		t.Fatal(err)
	}
	tx.Rollback(ctx)
}
