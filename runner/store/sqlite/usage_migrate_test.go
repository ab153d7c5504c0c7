package sqlite

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
)

// writeV10 writes a file at schema version 10 holding n runs of two
// tenants over four days, every third without usage (failed before the
// provider answered).
func writeV10(t testing.TB, path string, n int) {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	qs := append([]string{}, migrations[:10]...)
	qs = append(qs, `CREATE TABLE schema_version (version INTEGER NOT NULL)`,
		`INSERT INTO schema_version (version) VALUES (10)`,
		fmt.Sprintf(`WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i + 1 < %d)
		INSERT INTO runs (seq, id, status, session_id, thread_id, actor_id, tenant_id, created_at, ended_at,
			input_tokens, output_tokens, total_tokens, request)
		SELECT i + 1, 'run_' || printf('%%012d', i), 'completed', 'sess_x', 'thread_x', 'u' || (i %% 5),
			CASE i %% 2 WHEN 0 THEN 'acme' ELSE 'globex' END, 1700006400 + (i %% 4) * 86400, 1700006400 + (i %% 4) * 86400 + 1,
			CASE WHEN i %% 3 = 2 THEN NULL ELSE 10 + i %% 7 END, CASE WHEN i %% 3 = 2 THEN NULL ELSE 100 + i %% 11 END,
			CASE WHEN i %% 3 = 2 THEN NULL ELSE 110 + i %% 7 + i %% 11 END, '{"input":[{"role":"user","content":"hello there"}]}'
		FROM c`, n))
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
}

// Migration 12 fills the ledger from the runs already stored: per tenant
// and day, its sums are the runs' recorded usage.
func TestMigration12BackfillsTheLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v10.db")
	writeV10(t, path, 3000)
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.SumUsage(t.Context(), runner.UsageQuery{From: 0, To: 1 << 40, ByTenant: true, Bucket: runner.BucketDay, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		tenant string
		day    int64
	}
	want := map[key][3]int64{}
	q, err := s.r.Query(`SELECT tenant_id, (ended_at / 86400) * 86400, count(*), sum(input_tokens), sum(output_tokens)
		FROM runs WHERE input_tokens IS NOT NULL GROUP BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	for q.Next() {
		var k key
		var v [3]int64
		if err := q.Scan(&k.tenant, &k.day, &v[0], &v[1], &v[2]); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	q.Close()
	if len(rows) != len(want) || len(want) != 4 {
		t.Fatalf("%d rows, want %d (and 4: each tenant on two of the four days)", len(rows), len(want))
	}
	for _, r := range rows {
		if got := [3]int64{r.Runs, r.InputTokens, r.OutputTokens}; got != want[key{r.TenantID, r.Start}] {
			t.Errorf("%s day %d: %v, want %v", r.TenantID, r.Start, got, want[key{r.TenantID, r.Start}])
		}
	}
}

// BenchmarkMigration12 times the first start on a file of 200,000 runs
// at version 10 (the ledger's backfill and index); docs/operations.md
// quotes it per million runs.
func BenchmarkMigration12(b *testing.B) {
	const n = 200_000
	dir := b.TempDir()
	src := filepath.Join(dir, "src.db")
	writeV10(b, src, n)
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		path := filepath.Join(dir, fmt.Sprintf("v10-%d.db", i))
		copyFile(b, src, path)
		b.StartTimer()
		start := time.Now()
		s, err := Open(b.Context(), path)
		total += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(total.Seconds()/float64(b.N)*(1e6/n), "s/Mruns")
}

func copyFile(t testing.TB, from, to string) {
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
