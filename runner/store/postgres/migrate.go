package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations are applied in order; migrations[i] brings the schema from
// version i to i+1. The numbering is the SQLite driver's
// (runner/store/sqlite/migrate.go), entry for entry: a column added there
// is added here under the same number, and TestSameSchemaVersionAsSQLite
// fails when the two lists differ in length. Never change what an applied
// entry leaves behind. An index on a table that already holds rows (runs,
// responses) is a build, not a statement of sql: a plain CREATE INDEX
// holds a SHARE lock on its table for the whole build, and every host of
// the fleet, of the old version too, would wait that long to write a run.
// 4, 7, 13, 15 and 17 once built theirs in sql; they leave the same
// schema through builds, so a database past them is unaffected and one
// below them upgrades without stopping the fleet's writes (RATIONALE.md
// "PostgreSQL for a fleet").
var migrations = []migration{
	// 1: sessions, threads, runs. seq orders lists (insertion order across
	// every host: one sequence in the database).
	{sql: `CREATE TABLE sessions (
		id         TEXT PRIMARY KEY,
		tenant_id  TEXT NOT NULL,
		created_at BIGINT NOT NULL
	);
	CREATE TABLE threads (
		id         TEXT PRIMARY KEY,
		session_id TEXT NOT NULL REFERENCES sessions(id),
		tenant_id  TEXT NOT NULL,
		created_at BIGINT NOT NULL
	);
	CREATE INDEX threads_session ON threads(session_id);
	CREATE TABLE runs (
		seq            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		id             TEXT NOT NULL UNIQUE,
		status         TEXT NOT NULL,
		status_reason  TEXT NOT NULL DEFAULT '',
		session_id     TEXT NOT NULL DEFAULT '',
		thread_id      TEXT NOT NULL DEFAULT '',
		actor_id       TEXT NOT NULL DEFAULT '',
		actor_type     TEXT NOT NULL DEFAULT '',
		actor_name     TEXT NOT NULL DEFAULT '',
		tenant_id      TEXT NOT NULL DEFAULT '',
		endpoint       TEXT NOT NULL DEFAULT '',
		model          TEXT NOT NULL DEFAULT '',
		request_id     TEXT NOT NULL DEFAULT '',
		correlation_id TEXT NOT NULL DEFAULT '',
		created_at     BIGINT NOT NULL,
		started_at     BIGINT,
		ended_at       BIGINT,
		input_tokens   BIGINT,
		output_tokens  BIGINT,
		total_tokens   BIGINT,
		error_code     TEXT,
		error_message  TEXT,
		request        TEXT,
		output         TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX runs_tenant ON runs(tenant_id, seq);
	CREATE INDEX runs_session ON runs(session_id, seq);
	CREATE INDEX runs_status ON runs(status, seq);`},
	// 2: provider calls per run.
	{sql: `ALTER TABLE runs ADD COLUMN attempts BIGINT NOT NULL DEFAULT 0;`},
	// 3: timings in milliseconds (NULL: not timed).
	{sql: `ALTER TABLE runs ADD COLUMN duration_ms BIGINT;
	ALTER TABLE runs ADD COLUMN ttft_ms BIGINT;`},
	// 4: the host that runs each run.
	{sql: `ALTER TABLE runs ADD COLUMN host_id TEXT NOT NULL DEFAULT '';`,
		builds: []build{{"runs_host_status", "runs(host_id, status)"}}},
	// 5: the response history (docs/api.md "Responses that remember"); see the SQLite
	// migration of the same number.
	{sql: `CREATE TABLE responses (
		run_id          TEXT PRIMARY KEY,
		tenant_id       TEXT NOT NULL,
		previous_run_id TEXT NOT NULL DEFAULT '',
		background      BOOLEAN NOT NULL DEFAULT FALSE,
		deleted         BOOLEAN NOT NULL DEFAULT FALSE,
		echo            TEXT NOT NULL DEFAULT '',
		object          TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE response_items (
		id        TEXT PRIMARY KEY,
		run_id    TEXT NOT NULL,
		tenant_id TEXT NOT NULL,
		position  INTEGER NOT NULL,
		output    BOOLEAN NOT NULL,
		message   TEXT NOT NULL
	);
	CREATE INDEX response_items_run ON response_items(run_id, position);
	CREATE TABLE run_events (
		run_id    TEXT NOT NULL,
		first_seq INTEGER NOT NULL,
		last_seq  INTEGER NOT NULL,
		frames    BYTEA NOT NULL,
		PRIMARY KEY (run_id, first_seq)
	);`},
	// 6: the OpenTelemetry trace id of the request that made the run (32
	// hex digits), so a run leads to its trace. "" without tracing and on
	// older runs.
	{sql: `ALTER TABLE runs ADD COLUMN trace_id TEXT NOT NULL DEFAULT '';`},
	// 7: fewer indexes per run, as in the SQLite migration of the same
	// number: sessions and threads have no rows of their own (a run
	// carries its session and thread; runs_session and runs_thread find
	// them), and runs_status and runs_host_status become one partial index
	// of the runs start-up recovery looks for.
	{sql: `DROP TABLE threads;
	DROP TABLE sessions;
	DROP INDEX runs_status;
	DROP INDEX runs_host_status;`,
		builds: []build{
			{"runs_thread", "runs(thread_id)"},
			{"runs_live", "runs(host_id) WHERE status IN ('queued', 'running')"},
		}},
	// 8: conversations, as in the SQLite migration of the same number.
	{sql: `CREATE TABLE conversations (
		session_id TEXT PRIMARY KEY,
		tenant_id  TEXT NOT NULL,
		created_at BIGINT NOT NULL,
		metadata   TEXT NOT NULL DEFAULT '{}',
		deleted    BOOLEAN NOT NULL DEFAULT FALSE
	);
	CREATE TABLE conversation_items (
		seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		session_id TEXT NOT NULL,
		id         TEXT NOT NULL,
		data       TEXT NOT NULL
	);
	CREATE UNIQUE INDEX conversation_items_id ON conversation_items(session_id, id);
	CREATE INDEX conversation_items_seq ON conversation_items(session_id, seq);`},
	// 9: nothing here. SQLite's 9 replaces runs_live with a low-water mark
	// per host; PostgreSQL keeps runs_live, because its hosts share the
	// database and its seq comes from a sequence that all of them draw
	// from, so no host knows which seqs the others hold. The number is
	// kept so that both stores count versions alike.
	{sql: `SELECT 1;`},
	// 10: nothing here either. SQLite's 10 leaves out of runs_session and
	// runs_thread the runs that open their session and thread, whose ids
	// are the run's own (contract.OwnSessionID). PostgreSQL keeps both
	// indexes whole: it met its CPU target with them (docs/performance.md),
	// and its planner would need the same condition repeated in every
	// query by session or thread to use a partial index. Its lookups find
	// such sessions and threads through the indexes as before.
	{sql: `SELECT 1;`},
	// 11: leases (runner/lease.go), as SQLite's 11: the fencing token of
	// the run's latest acquisition and when its lease runs out (Unix ms,
	// NULL: none). A takeover scan reads the live runs through runs_live.
	{sql: `ALTER TABLE runs ADD COLUMN lease_token BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE runs ADD COLUMN lease_expires BIGINT;`},
	// 12: the usage ledger (SQLite's 12, filled from the stored runs the
	// same way; keyed by run, so a line is written once whichever host
	// ends the run) and the budgets' counters: a row per budget and slot
	// of its window, taken under a lock per budget (budget.go). A row of
	// slot -1 says the budget's counter was filled from the ledger.
	{sql: `CREATE TABLE usage_ledger (
		run_id           TEXT PRIMARY KEY,
		at               BIGINT NOT NULL,
		tenant_id        TEXT NOT NULL,
		actor_id         TEXT NOT NULL DEFAULT '',
		token            TEXT NOT NULL DEFAULT '',
		model            TEXT NOT NULL DEFAULT '',
		input_tokens     BIGINT NOT NULL DEFAULT 0,
		cached_tokens    BIGINT NOT NULL DEFAULT 0,
		output_tokens    BIGINT NOT NULL DEFAULT 0,
		reasoning_tokens BIGINT NOT NULL DEFAULT 0,
		cost_nanos       BIGINT NOT NULL DEFAULT 0
	);
	INSERT INTO usage_ledger (at, run_id, tenant_id, actor_id, input_tokens, output_tokens)
		SELECT COALESCE(ended_at, created_at), id, tenant_id, actor_id, COALESCE(input_tokens, 0), COALESCE(output_tokens, 0)
		FROM runs WHERE COALESCE(input_tokens, 0) > 0 OR COALESCE(output_tokens, 0) > 0;
	CREATE INDEX usage_ledger_tenant ON usage_ledger(tenant_id, at);
	CREATE INDEX usage_ledger_at ON usage_ledger(at);
	CREATE TABLE budget_slots (
		key    TEXT NOT NULL,
		slot   BIGINT NOT NULL,
		amount BIGINT NOT NULL,
		PRIMARY KEY (key, slot)
	);`},
	// 13: each item stored once, as in the SQLite migration of the same
	// number (runner/store/internal/itemref), but for the count of a
	// response's referrers: an UPDATE of the base's row would write a new
	// version of it (its final object and all) per referrer, so the
	// referrers are found by responses_base, and a first write locks its
	// base's row FOR SHARE instead.
	{sql: `ALTER TABLE responses ADD COLUMN base_run_id TEXT NOT NULL DEFAULT '',
		ADD COLUMN base_count INTEGER NOT NULL DEFAULT 0,
		ADD COLUMN forgotten BOOLEAN NOT NULL DEFAULT FALSE,
		ADD COLUMN prefix_hash BYTEA,
		ADD COLUMN prefix_count INTEGER NOT NULL DEFAULT 0,
		ADD COLUMN input_hash BYTEA,
		ADD COLUMN input_count INTEGER NOT NULL DEFAULT 0;
	UPDATE responses SET forgotten = TRUE WHERE deleted;`,
		builds: []build{
			{"responses_base", "responses(base_run_id) WHERE base_run_id <> ''"},
			{"responses_prefix", "responses(tenant_id, prefix_hash) WHERE prefix_hash IS NOT NULL"},
			{"responses_input", "responses(tenant_id, input_hash) WHERE input_hash IS NOT NULL"},
		}},
	// 14: nothing here. SQLite's 14 moves a run's recorded request to a
	// row of its own, because SQLite writes a whole row again on any
	// UPDATE and a run's end rewrote it. PostgreSQL keeps a value over
	// about 2 KB out of line (TOAST) and a new version of the row points
	// at the same out-of-line value when an UPDATE leaves the column alone,
	// as a run's end does. The number is kept so that both stores count
	// versions alike.
	{sql: `SELECT 1;`},
	// 15: a recorded request kept by reference to an earlier run's of the
	// tenant that begins with the same bytes (RATIONALE.md "Agent-sized
	// bodies", runner/store/internal/itemref request.go), as in the SQLite
	// migration of the same number, in the run's row: its first
	// request_shared bytes are request_base's request's, and request
	// holds a header byte and the rest; request_depth counts the
	// references behind it (0: kept whole). A request of
	// runner.SharedRequestMin bytes or more indexes the hash of its
	// input's prefix (request_prefix bytes) by tenant; runs_request_base
	// finds the requests based on one that a purge or delete empties,
	// to be written whole first.
	{sql: `ALTER TABLE runs ADD COLUMN request_base TEXT,
		ADD COLUMN request_shared INTEGER NOT NULL DEFAULT 0,
		ADD COLUMN request_depth INTEGER NOT NULL DEFAULT 0,
		ADD COLUMN request_hash BYTEA,
		ADD COLUMN request_prefix INTEGER NOT NULL DEFAULT 0;`,
		builds: []build{
			{"runs_request_hash", "runs(tenant_id, request_hash) WHERE request_hash IS NOT NULL"},
			{"runs_request_base", "runs(request_base) WHERE request_base IS NOT NULL"},
		}},
	// 16: a run's output text kept once (RATIONALE.md "Each item stored
	// once"), as in the SQLite migration of the same number: output_ref
	// says that the text is its response's first output item's, and
	// runs.output is then empty. A run's end wrote the answer twice, in
	// the run and in the output item, with the run's row over 900 bytes.
	{sql: `ALTER TABLE runs ADD COLUMN output_ref BOOLEAN NOT NULL DEFAULT FALSE;`},
	// 17: a request's base found by one row per hash (requests.go), as in
	// the SQLite migration of the same number: the index orders each
	// hash's runs by depth, so the lookup stops at the first instead of
	// reading every run that sent the same request. The new index is built
	// beside the old one under a name of its own and takes the old one's
	// name once that is gone, so lookups always have one of the two.
	{builds: []build{
		{"runs_request_hash_17", "runs(tenant_id, request_hash, request_depth) WHERE request_hash IS NOT NULL"},
		{"runs_request_hash", ""},
	},
		after: `ALTER INDEX runs_request_hash_17 RENAME TO runs_request_hash;`},
	// 18: a tenant's forget generation (probe.go), as in the SQLite
	// migration of the same number: one row per tenant, raised in the
	// transaction of every write that removes items a host's history
	// cache may hold, by the schema (triggers), so that no removal can
	// forget to, whatever build wrote it (hosts of two builds share the
	// database during an upgrade). The triggers are deferred to the
	// commit: a removal takes its tenants' rows after every other row it
	// locks, so two removals never wait on each other in a cycle through
	// them. An item's trigger leaves a conversation deleted in the same
	// transaction to the conversation's.
	{sql: `CREATE TABLE history_gens (
		tenant_id TEXT PRIMARY KEY,
		gen       BIGINT NOT NULL
	);
	CREATE FUNCTION history_forgot() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		INSERT INTO history_gens (tenant_id, gen) VALUES (NEW.tenant_id, 1)
			ON CONFLICT (tenant_id) DO UPDATE SET gen = history_gens.gen + 1;
		RETURN NULL;
	END $$;
	CREATE FUNCTION history_item_forgot() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		INSERT INTO history_gens (tenant_id, gen)
			SELECT tenant_id, 1 FROM conversations WHERE session_id = OLD.session_id AND NOT deleted
			ON CONFLICT (tenant_id) DO UPDATE SET gen = history_gens.gen + 1;
		RETURN NULL;
	END $$;
	CREATE CONSTRAINT TRIGGER responses_forgotten AFTER UPDATE OF forgotten ON responses
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
		WHEN (NEW.forgotten AND NOT OLD.forgotten) EXECUTE PROCEDURE history_forgot();
	CREATE CONSTRAINT TRIGGER conversations_deleted AFTER UPDATE OF deleted ON conversations
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
		WHEN (NEW.deleted AND NOT OLD.deleted) EXECUTE PROCEDURE history_forgot();
	CREATE CONSTRAINT TRIGGER conversation_items_deleted AFTER DELETE ON conversation_items
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE PROCEDURE history_item_forgot();`},
	// 19: nothing here. SQLite's purge mark (its migration 19) bounds a
	// purge that holds the only writer; here a purge's scans do not block
	// other writers (MVCC), and PurgeBefore keeps them.
	{},
}

// A migration is one version step.
type migration struct {
	// sql runs in the migration's transaction, which records its version.
	sql string
	// builds run once that transaction has committed, each statement on
	// its own outside a transaction (CREATE INDEX CONCURRENTLY cannot run
	// in one), still under the migration lock: the table's writers go on
	// while the index is built. schema_version.building names the
	// migration until its builds are done, so a host that stops midway
	// leaves them to the next one that starts.
	builds []build
	// after runs in the transaction that records the builds done.
	after string
}

// A build creates index on the table and key of on (a CREATE INDEX's text
// after ON) or, with on empty, drops it.
type build struct{ index, on string }

// plain is m as statements of one transaction, as a new database applies
// it: its tables are empty, so a plain CREATE INDEX holds its lock for no
// time worth sparing, and the whole schema is made at once or not at all.
func (m migration) plain() string {
	var b strings.Builder
	b.WriteString(m.sql)
	for _, x := range m.builds {
		if x.on == "" {
			fmt.Fprintf(&b, "\nDROP INDEX %s;", x.index)
		} else {
			fmt.Fprintf(&b, "\nCREATE INDEX %s ON %s;", x.index, x.on)
		}
	}
	if m.after != "" {
		b.WriteString("\n" + m.after)
	}
	return strings.TrimSpace(b.String())
}

// SchemaVersion is the schema version this binary writes.
func SchemaVersion() int { return len(migrations) }

// migrateLock is the advisory lock key that serialises migrations: hosts
// starting at once queue on it, and each finds the schema the first one
// brought up to date. Binaries before the index builds took it with
// pg_advisory_xact_lock; the session lock taken here excludes them as well.
const migrateLock = 0x72756e65646765 // "runedge"

// migrate brings the schema up to date on a connection of its own, taken
// from the pool and closed at the end (with it the session's lock and
// settings go): a new database in one transaction; an older one a
// migration per transaction, each followed by its index builds. A
// transaction per migration lets go of an ALTER TABLE's exclusive lock
// before the next migration's work, where one transaction for them all
// held it to the end.
func migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pc, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	conn := pc.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	// A build over millions of rows outlasts any statement_timeout set in
	// the DSN for the service's own statements.
	if _, err := conn.Exec(ctx, `SET statement_timeout = 0`); err != nil {
		return err
	}
	if err := lockMigrations(ctx, conn, log); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, building INTEGER NOT NULL DEFAULT 0);
		ALTER TABLE schema_version ADD COLUMN IF NOT EXISTS building INTEGER NOT NULL DEFAULT 0`); err != nil {
		return err
	}
	var version, building int
	err = conn.QueryRow(ctx, `SELECT version, building FROM schema_version`).Scan(&version, &building)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return migrateNew(ctx, conn)
	case err != nil:
		return err
	}
	if version > len(migrations) {
		return fmt.Errorf("database schema version %d is newer than this binary knows (%d)", version, len(migrations))
	}
	if version == 0 {
		return migrateNew(ctx, conn)
	}
	if building > 0 {
		if err := finishBuilds(ctx, conn, building, log); err != nil {
			return err
		}
	}
	for v := version; v < len(migrations); v++ {
		m := migrations[v]
		mark := 0
		if len(m.builds) > 0 {
			mark = v + 1
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if m.sql != "" {
				if _, err := tx.Exec(ctx, m.sql); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, `UPDATE schema_version SET version = $1, building = $2`, v+1, mark)
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %d: %w", v+1, err)
		}
		if mark > 0 {
			if err := finishBuilds(ctx, conn, mark, log); err != nil {
				return err
			}
		}
	}
	return nil
}

// migrateNew makes the schema of a new database in one transaction.
func migrateNew(ctx context.Context, conn *pgx.Conn) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for i, m := range migrations {
			if q := m.plain(); q != "" {
				if _, err := tx.Exec(ctx, q); err != nil {
					return fmt.Errorf("migration %d: %w", i+1, err)
				}
			}
		}
		_, err := tx.Exec(ctx, `DELETE FROM schema_version; INSERT INTO schema_version (version, building) VALUES (`+
			strconv.Itoa(len(migrations))+`, 0)`)
		return err
	})
}

// lockMigrations takes the migration lock for conn's session, trying
// again until it is free. A host blocked in pg_advisory_lock would wait
// inside a statement whose snapshot the holder's CREATE INDEX CONCURRENTLY
// waits out in turn (it waits for every transaction older than its own
// snapshot): a deadlock that PostgreSQL breaks by failing one of the two,
// the build or the start. A try holds its snapshot for a moment only.
func lockMigrations(ctx context.Context, conn *pgx.Conn, log *slog.Logger) error {
	wait := 10 * time.Millisecond
	for {
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(migrateLock)).Scan(&ok); err != nil {
			return err
		}
		if ok {
			return nil
		}
		if wait == 10*time.Millisecond {
			log.Info("store: waiting for another host's schema migration")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// finishBuilds runs the builds of migration n, then its after and clears
// the mark, in one transaction. Each build can be run again: a build
// done is skipped, and one left INVALID by a build that was interrupted
// (its process or connection lost, a cancel, a deadlock) is dropped and
// built again, since CREATE INDEX … IF NOT EXISTS would take it for done.
func finishBuilds(ctx context.Context, conn *pgx.Conn, n int, log *slog.Logger) error {
	if n > len(migrations) {
		return fmt.Errorf("migration %d: builds left unfinished by a newer binary", n)
	}
	m := migrations[n-1]
	for _, b := range m.builds {
		begin := time.Now()
		if err := runBuild(ctx, conn, b, func() {
			log.Info("store: building an index concurrently; writes go on", "migration", n, "index", b.index)
		}); err != nil {
			return fmt.Errorf("migration %d: index %s: %w", n, b.index, err)
		}
		log.Debug("store: index build done", "migration", n, "index", b.index, "took", time.Since(begin))
	}
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if m.after != "" {
			if _, err := tx.Exec(ctx, m.after); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `UPDATE schema_version SET building = 0`)
		return err
	})
	if err != nil {
		return fmt.Errorf("migration %d: %w", n, err)
	}
	return nil
}

// runBuild makes b's index exist, valid (or, for a drop, not exist)
// without blocking the table's writers; starting is called before a build.
func runBuild(ctx context.Context, conn *pgx.Conn, b build, starting func()) error {
	if b.on != "" {
		var valid bool
		err := conn.QueryRow(ctx, `SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)`, b.index).Scan(&valid)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		case valid:
			return nil
		}
	}
	if _, err := conn.Exec(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+b.index); err != nil {
		return err
	}
	if b.on == "" {
		return nil
	}
	starting()
	_, err := conn.Exec(ctx, `CREATE INDEX CONCURRENTLY `+b.index+` ON `+b.on)
	return err
}
