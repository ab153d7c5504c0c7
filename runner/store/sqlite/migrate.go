package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// migrations are applied in order; migrations[i] brings the schema from
// version i to i+1. Never edit an applied entry: append a new one, so every
// file in the field can be brought forward.
var migrations = []string{
	`CREATE TABLE sessions (
		id         TEXT PRIMARY KEY,
		tenant_id  TEXT NOT NULL,
		created_at INTEGER NOT NULL
	);
	CREATE TABLE threads (
		id         TEXT PRIMARY KEY,
		session_id TEXT NOT NULL REFERENCES sessions(id),
		tenant_id  TEXT NOT NULL,
		created_at INTEGER NOT NULL
	);
	CREATE INDEX threads_session ON threads(session_id);
	CREATE TABLE runs (
		seq            INTEGER PRIMARY KEY AUTOINCREMENT, -- paging order; never reused
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
		created_at     INTEGER NOT NULL,
		started_at     INTEGER,
		ended_at       INTEGER,
		input_tokens   INTEGER,
		output_tokens  INTEGER,
		total_tokens   INTEGER,
		error_code     TEXT,
		error_message  TEXT,
		request        TEXT,
		output         TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX runs_tenant ON runs(tenant_id, seq);
	CREATE INDEX runs_session ON runs(session_id, seq);
	CREATE INDEX runs_status ON runs(status, seq);`,
	// 2: provider calls the agent made per run (a structured-output repair
	// makes two). Older runs read 0: not recorded.
	`ALTER TABLE runs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;`,
	// 3: timings in milliseconds (the second-resolution times show every
	// short run as 0s). NULL: not timed (older runs, interrupted runs).
	`ALTER TABLE runs ADD COLUMN duration_ms INTEGER;
	ALTER TABLE runs ADD COLUMN ttft_ms INTEGER;`,
	// 4: the host that runs each run, so start-up recovery of one host
	// leaves the live runs of the others alone. Older runs read "".
	`ALTER TABLE runs ADD COLUMN host_id TEXT NOT NULL DEFAULT '';
	CREATE INDEX runs_host_status ON runs(host_id, status);`,
	// 5: the response history (docs/api.md "Responses that remember"). A stored
	// response has a row in responses; store:false runs have none. Items
	// hold native messages by the id clients reference; stream events are
	// kept in batches, one row per batch, so a long stream costs a few
	// writes rather than one per token.
	`CREATE TABLE responses (
		run_id          TEXT PRIMARY KEY,
		tenant_id       TEXT NOT NULL,
		previous_run_id TEXT NOT NULL DEFAULT '',
		background      INTEGER NOT NULL DEFAULT 0,
		deleted         INTEGER NOT NULL DEFAULT 0,
		echo            TEXT NOT NULL DEFAULT '',
		object          TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE response_items (
		id        TEXT PRIMARY KEY,
		run_id    TEXT NOT NULL,
		tenant_id TEXT NOT NULL,
		position  INTEGER NOT NULL,
		output    INTEGER NOT NULL,
		message   TEXT NOT NULL
	);
	CREATE INDEX response_items_run ON response_items(run_id, position);
	CREATE TABLE run_events (
		run_id    TEXT NOT NULL,
		first_seq INTEGER NOT NULL,
		last_seq  INTEGER NOT NULL,
		frames    TEXT NOT NULL,
		PRIMARY KEY (run_id, first_seq)
	);`,
	// 6: the OpenTelemetry trace id of the request that made the run (32
	// hex digits), so a run leads to its trace. "" without tracing and on
	// older runs.
	`ALTER TABLE runs ADD COLUMN trace_id TEXT NOT NULL DEFAULT '';`,
	// 7: fewer B-trees per run (RATIONALE.md "Fewer, ordered pages per
	// run"). Every B-tree a write touches is at least one page appended to
	// the WAL (two pwrite calls), and that was SQLite's largest cost:
	// - sessions and threads go: a run carries its session and thread, so
	//   a session exists while a run of it does (runs_session) and a
	//   thread's session is its runs' (runs_thread). StartRun has created
	//   a session or thread only together with its first run since
	//   migration 1's code was replaced; an empty one could not be
	//   continued usefully anyway.
	// - runs loses AUTOINCREMENT (its sqlite_sequence row was rewritten by
	//   every insert): runs are never deleted, so max(seq)+1 never reuses
	//   a seq.
	// - runs_status and runs_host_status become one partial index of the
	//   runs start-up recovery looks for (queued, running): two pages per
	//   write less, and an index that holds only live runs. Listing by
	//   status alone scans newest first.
	`DROP TABLE threads;
	DROP TABLE sessions;
	CREATE TABLE runs7 (
		seq            INTEGER PRIMARY KEY, -- paging order
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
		created_at     INTEGER NOT NULL,
		started_at     INTEGER,
		ended_at       INTEGER,
		input_tokens   INTEGER,
		output_tokens  INTEGER,
		total_tokens   INTEGER,
		error_code     TEXT,
		error_message  TEXT,
		request        TEXT,
		output         TEXT NOT NULL DEFAULT '',
		attempts       INTEGER NOT NULL DEFAULT 0,
		duration_ms    INTEGER,
		ttft_ms        INTEGER,
		host_id        TEXT NOT NULL DEFAULT '',
		trace_id       TEXT NOT NULL DEFAULT ''
	);
	INSERT INTO runs7 SELECT seq, id, status, status_reason, session_id, thread_id,
		actor_id, actor_type, actor_name, tenant_id, endpoint, model,
		request_id, correlation_id, created_at, started_at, ended_at,
		input_tokens, output_tokens, total_tokens, error_code, error_message,
		request, output, attempts, duration_ms, ttft_ms, host_id, trace_id FROM runs;
	DROP TABLE runs;
	ALTER TABLE runs7 RENAME TO runs;
	CREATE INDEX runs_tenant ON runs(tenant_id, seq);
	CREATE INDEX runs_session ON runs(session_id, seq);
	CREATE INDEX runs_thread ON runs(thread_id);
	CREATE INDEX runs_live ON runs(host_id) WHERE status IN ('queued', 'running');`,
	// 8: conversations (docs/api.md "Conversations"): a session's record
	// of the OpenAI Conversations API and its items in order. Items are
	// kept as the client sent them (or a run produced them), by seq.
	`CREATE TABLE conversations (
		session_id TEXT PRIMARY KEY,
		tenant_id  TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		metadata   TEXT NOT NULL DEFAULT '{}',
		deleted    INTEGER NOT NULL DEFAULT 0
	);
	CREATE TABLE conversation_items (
		seq        INTEGER PRIMARY KEY, -- order within a conversation
		session_id TEXT NOT NULL,
		id         TEXT NOT NULL,
		data       TEXT NOT NULL
	);
	CREATE UNIQUE INDEX conversation_items_id ON conversation_items(session_id, id);
	CREATE INDEX conversation_items_seq ON conversation_items(session_id, seq);`,
	// 9: start-up recovery scans from a low-water mark per host instead of
	// reading runs_live, whose page every run wrote twice (marks.go,
	// RATIONALE.md "Recovery from a low-water mark"). A host's mark is the
	// least seq of its live runs, taken from runs_live before it goes.
	`CREATE TABLE live_marks (
		host_id TEXT PRIMARY KEY,
		low_seq INTEGER NOT NULL
	) WITHOUT ROWID;
	INSERT INTO live_marks (host_id, low_seq)
		SELECT host_id, MIN(seq) FROM runs WHERE status IN ('queued', 'running') GROUP BY host_id;
	DROP INDEX runs_live;`,
	// 10: a run that opens its session and thread writes no entry in
	// runs_session and runs_thread (RATIONALE.md "A new session's ids are
	// its run's"). Their ids are its own suffix behind their prefixes
	// (contract.OwnSessionID, OwnThreadID), so a lookup by session or
	// thread also tries the run its argument names (contract.OpenerID)
	// and the indexes keep only the runs that continue a session or
	// thread. Most runs open one: every chat completion without a session
	// header. Rows written before keep their entries, because their ids
	// are not their run's. A query reaches these indexes only when its
	// WHERE repeats the index's condition word for word (sessionNotOwnSQL,
	// threadNotOwnSQL in stmts.go; TestPartialIndexesMatchTheQueries).
	`DROP INDEX runs_session;
	DROP INDEX runs_thread;
	CREATE INDEX runs_session ON runs(session_id, seq) WHERE session_id <> 'sess_' || substr(id, 5);
	CREATE INDEX runs_thread ON runs(thread_id) WHERE thread_id <> 'thread_' || substr(id, 5);`,
	// 11: leases (runner/lease.go): the fencing token of the run's latest
	// acquisition (0 on runs written before) and when its lease runs out,
	// in Unix milliseconds (NULL: no lease, as a run that waits or ended).
	// No index: renewals find their runs by id, takeovers scan the live
	// runs from the hosts' low-water marks (lease.go).
	`ALTER TABLE runs ADD COLUMN lease_token INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE runs ADD COLUMN lease_expires INTEGER;`,
	// 12: the usage ledger (runner/usage.go, usage.go here): a line per run
	// that reported usage, written with the run's outcome, and filled here
	// from the runs already stored (their model is the provider's, which
	// runs did not record: ""; no token, no cost, no cached or reasoning
	// split). The key leads with the time: a range is read in order, and a
	// tenant's sum reads the range's lines of every tenant. There is no
	// index by tenant: it was half of what the line costs a run's end
	// (BenchmarkCreateAndFinishRun, 164 → 201 µs of CPU with it, 183
	// without), and sums are reports, not the request path.
	`CREATE TABLE usage_ledger (
		at               INTEGER NOT NULL,
		run_id           TEXT NOT NULL,
		tenant_id        TEXT NOT NULL,
		actor_id         TEXT NOT NULL DEFAULT '',
		token            TEXT NOT NULL DEFAULT '',
		model            TEXT NOT NULL DEFAULT '',
		input_tokens     INTEGER NOT NULL DEFAULT 0,
		cached_tokens    INTEGER NOT NULL DEFAULT 0,
		output_tokens    INTEGER NOT NULL DEFAULT 0,
		reasoning_tokens INTEGER NOT NULL DEFAULT 0,
		cost_nanos       INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (at, run_id)
	) WITHOUT ROWID;
	INSERT INTO usage_ledger (at, run_id, tenant_id, actor_id, input_tokens, output_tokens)
		SELECT COALESCE(ended_at, created_at), id, tenant_id, actor_id, COALESCE(input_tokens, 0), COALESCE(output_tokens, 0)
		FROM runs WHERE COALESCE(input_tokens, 0) > 0 OR COALESCE(output_tokens, 0) > 0
		ORDER BY 1, 2;`,
	// 13: each item stored once (RATIONALE.md "Each item stored once",
	// runner/store/internal/itemref). A response whose input begins with
	// items an earlier response of its tenant holds keeps them by
	// reference: its first base_count items are base_run_id's first
	// base_count, and its own rows hold the rest. refs counts the
	// responses based on a response and ref_max the most items they
	// share of it: a response deleted or purged (forgotten: its items are
	// no longer its to show) keeps those rows while it is referenced, and
	// loses them with its last referrer. A base is found by prefix_hash,
	// the hash of a response's input and output items (prefix_count of
	// them), written with its end, per tenant (responses_prefix), or by
	// input_hash, its input's alone (input_count items), written with its
	// start when the input is worth looking up (a resent answer that does
	// not map back to the stored output byte for byte still finds the
	// input before it). A deleted response's items were deleted with it:
	// it is forgotten.
	`ALTER TABLE responses ADD COLUMN base_run_id TEXT NOT NULL DEFAULT '';
	ALTER TABLE responses ADD COLUMN base_count INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE responses ADD COLUMN refs INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE responses ADD COLUMN ref_max INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE responses ADD COLUMN forgotten INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE responses ADD COLUMN prefix_hash BLOB;
	ALTER TABLE responses ADD COLUMN prefix_count INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE responses ADD COLUMN input_hash BLOB;
	ALTER TABLE responses ADD COLUMN input_count INTEGER NOT NULL DEFAULT 0;
	UPDATE responses SET forgotten = 1 WHERE deleted <> 0;
	CREATE INDEX responses_prefix ON responses(tenant_id, prefix_hash) WHERE prefix_hash IS NOT NULL;
	CREATE INDEX responses_input ON responses(tenant_id, input_hash) WHERE input_hash IS NOT NULL;`,
	// 14: a large recorded request in a row of its own, keyed by the
	// run's seq (RATIONALE.md "Agent-sized bodies"). SQLite writes a whole
	// row again on any UPDATE, so a run's end rewrote its request (229 KB
	// for an agent-sized turn) and the WAL took it twice. A request up to
	// a page (Store.apart) stays in runs.request, as do those of the runs
	// stored before: a read takes either.
	`CREATE TABLE run_requests (
		seq     INTEGER PRIMARY KEY, -- runs.seq
		request TEXT NOT NULL
	);`,
	// 15: a recorded request kept by reference to an earlier run's of the
	// tenant that begins with the same bytes (RATIONALE.md "Agent-sized
	// bodies", runner/store/internal/itemref request.go): its first
	// shared bytes are base_seq's request's, and request holds a header
	// byte and the rest; depth counts the references behind it (0: kept
	// whole). A request of runner.SharedRequestMin bytes or more indexes
	// the hash of its input's prefix (prefix_len bytes) by tenant, for
	// the runs after it to find; run_requests_base finds the requests
	// based on one that goes, to be written whole first. The table is
	// made again so that these columns come before the request: SQLite
	// reads a later column of a large row through its overflow pages.
	`CREATE TABLE run_requests15 (
		seq         INTEGER PRIMARY KEY, -- runs.seq
		base_seq    INTEGER,
		shared      INTEGER NOT NULL DEFAULT 0,
		depth       INTEGER NOT NULL DEFAULT 0,
		tenant_id   TEXT,
		prefix_hash BLOB,
		prefix_len  INTEGER NOT NULL DEFAULT 0,
		request     TEXT NOT NULL
	);
	INSERT INTO run_requests15 (seq, request) SELECT seq, request FROM run_requests;
	DROP TABLE run_requests;
	ALTER TABLE run_requests15 RENAME TO run_requests;
	CREATE INDEX run_requests_prefix ON run_requests(tenant_id, prefix_hash) WHERE prefix_hash IS NOT NULL;
	CREATE INDEX run_requests_base ON run_requests(base_seq) WHERE base_seq IS NOT NULL;`,
	// 16: a run's output text kept once (RATIONALE.md "Each item stored
	// once"): output_ref says that the text is its response's first
	// output item's (itemref.OutputElided), and runs.output is then
	// empty. A run's end wrote the answer twice, in the run and in the
	// output item.
	`ALTER TABLE runs ADD COLUMN output_ref INTEGER NOT NULL DEFAULT 0;`,
	// 17: a request's base found by one row per hash (requests.go): the
	// prefix index orders each hash's rows by depth, so the lookup stops
	// at the first instead of reading every run that sent the same
	// request.
	`DROP INDEX run_requests_prefix;
	CREATE INDEX run_requests_prefix ON run_requests(tenant_id, prefix_hash, depth) WHERE prefix_hash IS NOT NULL;`,
	// 18: a tenant's forget generation (probe.go): one row per tenant,
	// raised in the transaction of every write that removes items a
	// host's history cache may hold, so a kept history is checked by
	// reading one row instead of counting what it holds. The schema
	// raises it (triggers), so no removal can forget to, whatever build
	// wrote it: a response forgotten (deleted, purged: its items go with
	// it, release), a conversation deleted, an item of a conversation
	// that is not deleted.
	`CREATE TABLE history_gens (
		tenant_id TEXT PRIMARY KEY,
		gen       INTEGER NOT NULL
	);
	CREATE TRIGGER responses_forgotten AFTER UPDATE OF forgotten ON responses
		WHEN NEW.forgotten <> 0 AND OLD.forgotten = 0
	BEGIN
		INSERT INTO history_gens (tenant_id, gen) VALUES (NEW.tenant_id, 1)
			ON CONFLICT (tenant_id) DO UPDATE SET gen = gen + 1;
	END;
	CREATE TRIGGER conversations_deleted AFTER UPDATE OF deleted ON conversations
		WHEN NEW.deleted <> 0 AND OLD.deleted = 0
	BEGIN
		INSERT INTO history_gens (tenant_id, gen) VALUES (NEW.tenant_id, 1)
			ON CONFLICT (tenant_id) DO UPDATE SET gen = gen + 1;
	END;
	CREATE TRIGGER conversation_items_deleted AFTER DELETE ON conversation_items
		WHEN EXISTS (SELECT 1 FROM conversations WHERE session_id = OLD.session_id AND deleted = 0)
	BEGIN
		INSERT INTO history_gens (tenant_id, gen)
			SELECT tenant_id, 1 FROM conversations WHERE session_id = OLD.session_id
			ON CONFLICT (tenant_id) DO UPDATE SET gen = gen + 1;
	END;`,
	// 19: the purge's mark (runs.go PurgeBefore, RATIONALE.md "Retention
	// walks only what it has not forgotten"): every run whose seq is below
	// low_seq ended and was purged, so a purge walks runs by seq from it
	// instead of scanning every run ever made for ended_at (no index on
	// ended_at: each would cost every run a B-tree write).
	`CREATE TABLE purge_mark (
		id      INTEGER PRIMARY KEY CHECK (id = 1),
		low_seq INTEGER NOT NULL
	);
	INSERT INTO purge_mark (id, low_seq) VALUES (1, 0);`,
}

// SchemaVersion is the schema version this binary writes. The PostgreSQL
// driver keeps the same numbering (its tests compare the two), so a column
// added to one is added to the other under the same number.
func SchemaVersion() int { return len(migrations) }

// migrate creates the version table if needed and applies the missing
// migrations in one transaction, so a crash mid-way leaves the old version.
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("runner/store/sqlite: migrate: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("runner/store/sqlite: migrate: %w", err)
	}
	var version int
	err = tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&version)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return fmt.Errorf("runner/store/sqlite: migrate: %w", err)
		}
	case err != nil:
		return fmt.Errorf("runner/store/sqlite: migrate: %w", err)
	}
	if version > len(migrations) {
		return fmt.Errorf("runner/store/sqlite: database schema version %d is newer than this binary knows (%d)", version, len(migrations))
	}
	for i := version; i < len(migrations); i++ {
		if migrations[i] == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("runner/store/sqlite: migration %d: %w", i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, len(migrations)); err != nil {
		return fmt.Errorf("runner/store/sqlite: migrate: %w", err)
	}
	return tx.Commit()
}
