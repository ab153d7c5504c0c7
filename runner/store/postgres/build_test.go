package postgres

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/runedge/runedge/runner/store/postgres/pgtest"
)

// schemaAt makes a new schema at version v as a binary of that version
// left it (the first v migrations, schema_version without its building
// column), runs seed, and returns its DSN.
func schemaAt(t *testing.T, v int, seed ...string) string {
	t.Helper()
	ctx := t.Context()
	dsn := pgtest.Schema(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var qs []string
	for _, m := range migrations[:v] {
		if q := m.plain(); q != "" {
			qs = append(qs, q)
		}
	}
	qs = append(qs,
		`CREATE TABLE schema_version (version INTEGER NOT NULL)`,
		`INSERT INTO schema_version (version) VALUES (`+strconv.Itoa(v)+`)`)
	for _, q := range append(qs, seed...) {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return dsn
}

// checkSchema fails t unless the schema of dsn is at the current version
// with no build left and every index of runs and responses valid and as a
// new database has it.
func checkSchema(t *testing.T, dsn string) {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var version, building int
	if err := conn.QueryRow(ctx, `SELECT version, building FROM schema_version`).Scan(&version, &building); err != nil {
		t.Fatal(err)
	}
	if version != SchemaVersion() || building != 0 {
		t.Errorf("schema_version = %d, building %d; want %d, 0", version, building, SchemaVersion())
	}
	got := indexes(t, conn)
	fresh := pgtest.Schema(t)
	s, err := Open(ctx, fresh, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	fc, err := pgx.Connect(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close(ctx)
	if want := indexes(t, fc); !slices.Equal(got, want) {
		t.Errorf("indexes after the upgrade:\n%s\nwant, as a new database has them:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// indexes lists the indexes of runs and responses in conn's schema: name,
// validity and definition (without the schema's name).
func indexes(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(t.Context(), `SELECT c.relname, i.indisvalid, replace(pg_get_indexdef(i.indexrelid), current_schema() || '.', '')
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE i.indrelid IN (to_regclass('runs'), to_regclass('responses')) ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var name, def string
		var valid bool
		if err := rows.Scan(&name, &valid, &def); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s valid=%v %s", name, valid, def))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// An upgrade that builds indexes on runs (15 and 17, from version 14)
// while another connection writes runs without pause, three hosts
// starting at once: no write waits on a host that is building an index.
// A watcher asks the server, every few milliseconds, whether the writer
// is blocked by a process that is building one (pg_blocking_pids,
// pg_stat_progress_create_index); with CREATE INDEX in the migration's
// transaction (as before) it is, for as long as the builds last. With a
// host waiting for the migration lock in pg_advisory_lock, the first
// host's build and that wait deadlock, and one of them fails.
func TestMigrationBuildsDoNotBlockWrites(t *testing.T) {
	ctx := t.Context()
	const rows = 200_000
	begin := time.Now()
	dsn := schemaAt(t, 14, `INSERT INTO runs (id, status, tenant_id, host_id, created_at, ended_at, output)
		SELECT 'run_' || g, 'completed', 'acme', 'h1', g, g, '' FROM generate_series(1, `+strconv.Itoa(rows)+`) g`)
	t.Logf("%d runs at version 14 in %v", rows, time.Since(begin).Round(time.Millisecond))

	writer, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close(ctx)
	watcher, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close(ctx)
	wpid := writer.PgConn().PID()

	stop := make(chan struct{})
	var writes atomic.Int64
	var maxWait atomic.Int64 // ns, the slowest write
	var wg sync.WaitGroup
	werr := make(chan error, 1)
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			_, err := writer.Exec(ctx, `INSERT INTO runs (id, status, tenant_id, host_id, created_at) VALUES ($1, 'running', 'acme', 'h2', $2)`,
				fmt.Sprintf("run_w%d", i), rows+i)
			if err == nil {
				_, err = writer.Exec(ctx, `UPDATE runs SET status = 'completed', ended_at = $2 WHERE seq = $1`, 1+i%rows, rows+i)
			}
			if err != nil {
				werr <- err
				return
			}
			writes.Add(1)
			if d := time.Since(t0).Nanoseconds(); d > maxWait.Load() {
				maxWait.Store(d)
			}
		}
	})
	var samples, building, blocked int
	var writesFirst, writesLast int64 = -1, -1
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			var b, w bool
			err := watcher.QueryRow(ctx, `SELECT
				EXISTS (SELECT 1 FROM pg_stat_progress_create_index WHERE relid = to_regclass('runs')),
				EXISTS (SELECT 1 FROM pg_stat_progress_create_index WHERE pid = ANY (pg_blocking_pids($1)))`, wpid).Scan(&b, &w)
			if err != nil {
				if ctx.Err() == nil {
					t.Error(err)
				}
				return
			}
			samples++
			if b {
				building++
				n := writes.Load()
				if writesFirst < 0 {
					writesFirst = n
				}
				writesLast = n
			}
			if w {
				blocked++
			}
			time.Sleep(2 * time.Millisecond)
		}
	})

	begin = time.Now()
	var hosts sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		hosts.Go(func() {
			s, err := Open(ctx, dsn, Options{})
			if err != nil {
				errs <- err
				return
			}
			s.Close()
		})
	}
	hosts.Wait()
	took := time.Since(begin)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a host's start: %v", err)
	}
	select {
	case err := <-werr:
		t.Fatalf("a write: %v", err)
	default:
	}
	t.Logf("migrated in %v; %d writes, the slowest %v; %d samples, %d during a build on runs, %d with the writer blocked by a build",
		took.Round(time.Millisecond), writes.Load(), time.Duration(maxWait.Load()).Round(time.Microsecond), samples, building, blocked)
	if building == 0 || writesLast <= writesFirst {
		t.Errorf("no write seen during a build (%d samples during one, writes %d → %d): the test saw nothing", building, writesFirst, writesLast)
	}
	if blocked > 0 {
		t.Errorf("the writer was blocked by an index build in %d of %d samples", blocked, samples)
	}
	checkSchema(t, dsn)
}

// A build interrupted after its index entered the catalog (its host's
// connection ended while the build waited for a writer's transaction)
// leaves an INVALID index and schema_version.building set; the next start
// drops the index, builds it again and finishes the migration.
func TestMigrationRepairsInterruptedBuild(t *testing.T) {
	ctx := t.Context()
	dsn := schemaAt(t, 16, `INSERT INTO runs (id, status, tenant_id, created_at) SELECT 'run_' || g, 'completed', 'acme', g FROM generate_series(1, 1000) g`)
	holder, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO runs (id, status, tenant_id, created_at) VALUES ('run_open', 'running', 'acme', 1001)`); err != nil {
		t.Fatal(err)
	}

	opened := make(chan error, 1)
	go func() {
		s, err := Open(ctx, dsn, Options{})
		if err == nil {
			s.Close()
		}
		opened <- err
	}()
	// Wait for the build of migration 17 to wait for the open transaction,
	// then end the building host's connection.
	watcher, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close(ctx)
	var pid int32
	giveUp := time.After(time.Minute) // a bound on a failure, not a measurement
	for {
		err := watcher.QueryRow(ctx, `SELECT pid FROM pg_stat_progress_create_index
			WHERE relid = to_regclass('runs') AND phase LIKE 'waiting for writers%'`).Scan(&pid)
		if err == nil {
			break
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		select {
		case err := <-opened:
			t.Fatalf("the migration ended before its build waited for the open transaction: %v", err)
		case <-giveUp:
			t.Fatal("no build waited for the open transaction (a plain CREATE INDEX or DROP INDEX in the migration's transaction waits for its lock instead)")
		case <-time.After(time.Millisecond):
		}
	}
	if _, err := watcher.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err == nil {
		t.Fatal("Open succeeded with its migration's connection ended")
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var valid bool
	var building int
	if err := watcher.QueryRow(ctx, `SELECT indisvalid, (SELECT building FROM schema_version) FROM pg_index WHERE indexrelid = to_regclass('runs_request_hash_17')`).Scan(&valid, &building); err != nil || valid || building != 17 {
		t.Fatalf("after the interrupted build: runs_request_hash_17 valid %v, building %d, %v; want an INVALID index, building 17", valid, building, err)
	}

	s, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	checkSchema(t, dsn)
	var n int
	if err := watcher.QueryRow(ctx, `SELECT count(*) FROM runs WHERE tenant_id = 'acme' AND request_hash IS NULL`).Scan(&n); err != nil || n != 1001 {
		t.Fatalf("runs after the repair: %d, %v", n, err)
	}
}
