package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/runedge/runedge/runner"
)

// The statements every request runs are compiled once, at Open. Compiling
// (parse + plan) cost about as much CPU as executing: a third of
// BenchmarkCreateAndFinishRun's profile was SQLite's parser when each
// ExecContext prepared its SQL afresh. database/sql keeps one compiled copy
// per connection of the pool and prepares again on its own when a
// connection is replaced, so a *sql.Stmt stays valid for the Store's life.
// Statements off the request path (ListRuns, MarkInterrupted, the
// refusal lookup) are not prepared: they would cost memory on every
// connection for no measurable gain.

// insertRunCols are the columns StartRun writes, in runArgs' order.
const insertRunCols = `id, status, status_reason, session_id, thread_id,
		actor_id, actor_type, actor_name, tenant_id, endpoint, model,
		request_id, correlation_id, created_at, started_at, ended_at,
		input_tokens, output_tokens, total_tokens, error_code, error_message,
		request, output, attempts, duration_ms, ttft_ms, host_id, trace_id,
		lease_token, lease_expires`

// insertRunValues is how many values insertRunCols has.
const insertRunValues = 30

// freshRunValues are the values of insertRunCols that a run just started
// has (runner.Service.Start: no reason, end, usage, error, output,
// attempts nor durations), as literals, by their index: a fresh run's
// insert (insertRunValuesSQL) writes them without binding them. Each value
// bound is a call into SQLite under its connection's mutex, and a text one
// a copy into C memory, unbound and freed after the statement: 11 values
// of a run's 30. They are what runArgs binds for such a run, so the row is
// the same byte for byte (TestFreshInsertWritesTheSameRow).
var freshRunValues = map[int]string{
	2: "''", 15: "NULL", 16: "NULL", 17: "NULL", 18: "NULL", 19: "NULL", 20: "NULL",
	22: "''", 23: "0", 24: "NULL", 25: "NULL",
}

// insertRunValuesSQL is the VALUES list of a run's insert: every value a
// parameter, or, fresh, freshRunValues' as literals. check, when not
// empty, makes the session id's value conditional (insertRunCheckedSQL).
func insertRunValuesSQL(fresh bool, check string) string {
	v := strings.Split(strings.Repeat("?", insertRunValues), "")
	if fresh {
		for i, lit := range freshRunValues {
			v[i] = lit
		}
	}
	if check != "" {
		v[3] = "CASE WHEN " + check + " THEN ? END"
	}
	return `(` + strings.Join(v, ", ") + `)`
}

const (
	insertRunSQL = `INSERT INTO runs (` + insertRunCols + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// A large recorded request is a row of its own (migration 14), keyed
	// by the run's seq, written once with the run (StartRun).
	insertRequestSQL = `INSERT INTO run_requests (seq, request) VALUES (?, ?)`
	// Sessions and threads have no rows of their own (migration 7): a
	// session or thread exists while a run of it does. A run that opens
	// one is inserted only when the check that used to be a table's
	// constraint holds, in the same statement: a new session's id and a
	// new thread's id are not taken (by any tenant: ids are global), and
	// an existing session is the tenant's (insertRunCheckedSQL).
	//
	// Every lookup by session or thread is two (migration 10): the run
	// that opened it, by the id the session's or thread's id names
	// (contract.OpenerID), and the runs that continued it, in the partial
	// index that holds only those (sessionNotOwnSQL, threadNotOwnSQL).
	// The opener comes first: it is a lookup of the primary key, and it is
	// found for most sessions. The check's parameters are: the session's
	// opener, the session id, (the tenant,) the session id, (the tenant,)
	// then the thread's opener, the thread id, the thread id (insertOf).
	insertRunNewSessionSQL = `NOT EXISTS (SELECT 1 FROM runs WHERE id = ? AND session_id = ?)
		AND NOT EXISTS (SELECT 1 FROM runs WHERE session_id = ? AND ` + sessionNotOwnSQL + `)
		AND ` + threadFreeSQL
	insertRunInSessionSQL = `(EXISTS (SELECT 1 FROM runs WHERE id = ? AND session_id = ? AND tenant_id = ?)
		OR EXISTS (SELECT 1 FROM runs WHERE session_id = ? AND ` + sessionNotOwnSQL + ` AND tenant_id = ?))
		AND ` + threadFreeSQL
	threadFreeSQL = `NOT EXISTS (SELECT 1 FROM runs WHERE id = ? AND thread_id = ?)
		AND NOT EXISTS (SELECT 1 FROM runs WHERE thread_id = ? AND ` + threadNotOwnSQL + `)`
	// sessionNotOwnSQL and threadNotOwnSQL are the conditions of the
	// partial indexes runs_session and runs_thread, as migration 10 wrote
	// them: the run's session (thread) is not the one it opened. SQLite
	// uses a partial index only for a query whose WHERE has the index's
	// condition as one of its terms, so every query by session or thread
	// repeats it (TestPartialIndexesMatchTheQueries).
	sessionNotOwnSQL = `session_id <> 'sess_' || substr(id, 5)`
	threadNotOwnSQL  = `thread_id <> 'thread_' || substr(id, 5)`

	runExistsSQL = `SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?)`

	getRunSQL         = `SELECT ` + runColumns + ` FROM runs WHERE id = ?`
	getRunOfTenantSQL = getRunSQL + ` AND tenant_id = ?`
	// threadSessionSQL's parameters: the thread's opener, the thread id,
	// the tenant, the thread id, the tenant.
	threadSessionSQL = `SELECT session_id FROM runs WHERE id = ? AND thread_id = ? AND tenant_id = ?
		UNION ALL SELECT session_id FROM runs WHERE thread_id = ? AND ` + threadNotOwnSQL + ` AND tenant_id = ?
		LIMIT 1`
)

// insertRunCheckedSQL is insertRunSQL that writes the run only when check
// holds: its session id becomes NULL otherwise, which runs.session_id
// refuses, and OR IGNORE makes the refusal a row not written (0 rows
// affected) rather than an error that would roll back the whole batch.
// The check is a value of a one-row VALUES insert, not the WHERE of an
// INSERT … SELECT: SQLite ran that SELECT into a temporary B-tree first,
// because it reads the table it inserts into, and kept a statement
// journal, because the statement might abort after writing. OR IGNORE
// also skips a duplicate run id, which StartRun tells apart afterwards
// (runExistsSQL), on that rare path only. Its parameters are anonymous
// ("?"): modernc looks up the name of every numbered one at each bind.
func insertRunCheckedSQL(check string) string { return insertRunCheckedFreshSQL(false, check) }

// insertRunCheckedFreshSQL is insertRunCheckedSQL, for a fresh run when
// fresh (freshRunValues).
func insertRunCheckedFreshSQL(fresh bool, check string) string {
	return `INSERT OR IGNORE INTO runs (` + insertRunCols + `) VALUES ` + insertRunValuesSQL(fresh, check)
}

// transitionSQL is Transition's UPDATE to target to, reachable from the
// states from. The lifecycle check is in the WHERE clause (see Transition), and
// so is the fence: its last two parameters are the writer's lease token
// twice (0: unfenced). A target other than queued or running (live) ends
// the lease. The output text comes after a flag given twice: it is the
// first output item of the response whose end rides on this write
// (itemref.OutputElided), and the run then keeps a reference to it
// (output_ref), unless the response was deleted meanwhile, when its
// output items are not written.
//
// The target and the states it may come from are literals: they are the
// statement's own (one per target), and bound they were a text value each
// to copy into C memory and free at every run's end.
func transitionSQL(to runner.Status, from []runner.Status, live bool) string {
	lease := ""
	if !live {
		lease = ", lease_expires = NULL"
	}
	in := make([]string, len(from))
	for i, f := range from {
		in[i] = statusLiteral(f)
	}
	return `UPDATE runs SET
		status = ` + statusLiteral(to) + `, status_reason = ?,
		started_at = COALESCE(?, started_at), ended_at = COALESCE(?, ended_at),
		input_tokens = COALESCE(?, input_tokens), output_tokens = COALESCE(?, output_tokens),
		total_tokens = COALESCE(?, total_tokens),
		output = CASE WHEN ? AND EXISTS (SELECT 1 FROM responses WHERE run_id = runs.id AND deleted = 0) THEN ''
			ELSE COALESCE(?, output) END,
		output_ref = CASE WHEN ? THEN EXISTS (SELECT 1 FROM responses WHERE run_id = runs.id AND deleted = 0)
			ELSE output_ref END,
		error_code = COALESCE(?, error_code), error_message = COALESCE(?, error_message),
		attempts = COALESCE(?, attempts),
		duration_ms = COALESCE(?, duration_ms), ttft_ms = COALESCE(?, ttft_ms)` + lease + `
		WHERE id = ? AND status IN (` + strings.Join(in, ", ") + `) AND (? = 0 OR lease_token = ?)`
}

// statusLiteral is s as an SQL string literal. A status is a lower-case
// word (runner.Status.Valid), which needs no escaping; anything else
// panics, at prepare time.
func statusLiteral(s runner.Status) string {
	if !s.Valid() || strings.ContainsRune(string(s), '\'') {
		panic(fmt.Sprintf("runner/store/sqlite: status %q is no literal", s))
	}
	return "'" + string(s) + "'"
}

// stmts are a Store's prepared statements.
type stmts struct {
	// On the writer, used as they are inside its transactions: a
	// transaction is statements on the writer's one connection (wtx.go).
	// begin, commit and rollback are those transactions' ends: SQLite
	// parses even "COMMIT", and a batch pays BEGIN and COMMIT once. They,
	// the run inserts, the transitions and the ledger's line run on
	// SQLite's C interface (rawexec.go).
	begin, commit, rollback                            *rawStmt
	insertRun, insertRunNewSession, insertRunInSession *rawStmt
	// The same three for a fresh run (freshRunValues).
	insertFreshRun, insertFreshRunNewSession, insertFreshRunInSession *rawStmt
	insertRequest                                                     *rawStmt
	// A request kept by reference (requests.go).
	findRequestBase     *sql.Stmt
	findNearRequestBase *sql.Stmt
	insertSharedRequest *rawStmt
	// The response history's (history.go).
	insertResponse, insertItem, setObject, insertOutput *sql.Stmt
	// Keeping each item once (itemref).
	findBase, useBase, setEnd *sql.Stmt
	// The usage ledger's line, with a run's end (usage.go).
	insertLedger *rawStmt
	// transition holds one UPDATE per status that can be reached (not
	// queued): the target and the states it comes from are its literals
	// (transitionSQL).
	transition map[runner.Status]*rawStmt

	// On the readers.
	getRun, getRunOfTenant, threadSession *sql.Stmt
	// The response history's and its probe's (history.go, probe.go).
	responseItems, responseLink, forgetGen *sql.Stmt
	// A conversation's turn's (conversations.go).
	getConversation, convItemSeq, convItems, convItemsAfter *sql.Stmt

	all []*sql.Stmt // everything above, for close
	cc  *cconn      // the writer's connection, where the raw ones were prepared
}

// prepareStmts compiles the request path's statements on w (writes, the
// writer's one connection) and r (reads). On failure it closes whatever it
// had prepared.
func prepareStmts(ctx context.Context, w *sql.Conn, r *sql.DB) (st *stmts, err error) {
	st = &stmts{transition: map[runner.Status]*rawStmt{}}
	if st.cc, err = openCConn(w); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			st.close()
			st = nil
		}
	}()
	prep := func(db interface {
		PrepareContext(context.Context, string) (*sql.Stmt, error)
	}, query string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var s *sql.Stmt
		if s, err = db.PrepareContext(ctx, query); err != nil {
			err = fmt.Errorf("runner/store/sqlite: prepare %.40q: %w", query, err)
			return nil
		}
		st.all = append(st.all, s)
		return s
	}
	raw := func(query string) *rawStmt {
		if err != nil {
			return nil
		}
		var s *rawStmt
		if s, err = st.cc.prepare(query); err != nil {
			return nil
		}
		return s
	}
	st.begin = raw("BEGIN IMMEDIATE")
	st.commit = raw("COMMIT")
	st.rollback = raw("ROLLBACK")
	st.insertRun = raw(insertRunSQL)
	st.insertRunNewSession = raw(insertRunCheckedSQL(insertRunNewSessionSQL))
	st.insertRunInSession = raw(insertRunCheckedSQL(insertRunInSessionSQL))
	st.insertFreshRun = raw(`INSERT INTO runs (` + insertRunCols + `) VALUES ` + insertRunValuesSQL(true, ""))
	st.insertFreshRunNewSession = raw(insertRunCheckedFreshSQL(true, insertRunNewSessionSQL))
	st.insertFreshRunInSession = raw(insertRunCheckedFreshSQL(true, insertRunInSessionSQL))
	st.insertRequest = raw(insertRequestSQL)
	st.findRequestBase = prep(w, findRequestBaseSQL)
	st.findNearRequestBase = prep(w, findNearRequestBaseSQL)
	st.insertSharedRequest = raw(insertSharedRequestSQL)
	st.insertResponse = prep(w, insertResponseSQL)
	st.insertItem = prep(w, insertItemSQL)
	st.setObject = prep(w, setObjectSQL)
	st.insertOutput = prep(w, insertOutputSQL)
	st.findBase = prep(w, findBaseSQL)
	st.useBase = prep(w, useBaseSQL)
	st.setEnd = prep(w, setEndSQL)
	st.insertLedger = raw(insertLedgerSQL)
	for _, to := range []runner.Status{runner.StatusQueued, runner.StatusRunning, runner.StatusCompleted,
		runner.StatusFailed, runner.StatusCancelled, runner.StatusWaiting} {
		if from := runner.TransitionSources(to); len(from) > 0 {
			live := to == runner.StatusQueued || to == runner.StatusRunning
			st.transition[to] = raw(transitionSQL(to, from, live))
		}
	}
	st.getRun = prep(r, getRunSQL)
	st.getRunOfTenant = prep(r, getRunOfTenantSQL)
	st.threadSession = prep(r, threadSessionSQL)
	st.responseItems = prep(r, itemsSQL)
	st.responseLink = prep(r, responseLinkSQL)
	st.forgetGen = prep(r, forgetGenSQL)
	st.getConversation = prep(r, getConversationSQL)
	st.convItemSeq = prep(r, convItemSeqSQL)
	st.convItems = prep(r, convItemsSQL)
	st.convItemsAfter = prep(r, convItemsAfterSQL)
	return st, err
}

// close releases every prepared statement (on every connection it was
// compiled on).
func (st *stmts) close() error {
	var errs []error
	for _, s := range st.all {
		errs = append(errs, s.Close())
	}
	if st.cc != nil {
		errs = append(errs, st.cc.close())
	}
	return errors.Join(errs...)
}
