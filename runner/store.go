package runner

import "context"

// The run history: one table of runs (native and compatible requests alike),
// with the sessions and threads they belong to. Implementations live under
// runner/store/ (sqlite; postgres later) and pass the shared conformance
// tests in runner/store/storetest.

// Store persists runs, sessions and threads. All methods are safe for
// concurrent use. Lookups scoped by tenant return ErrNotFound for ids
// of another tenant exactly as for unknown ids.
type Store interface {
	// ThreadSession returns the session of thread id for tenant, or
	// ErrNotFound.
	ThreadSession(ctx context.Context, tenantID, id string) (string, error)

	// StartRun records a new run together with the place it opens,
	// atomically: when newSession, session r.SessionID is created for
	// r.TenantID (an id already taken fails); when newThread, thread
	// r.ThreadID is created in session r.SessionID, which must be
	// r.TenantID's (ErrNotFound otherwise); then the run is inserted, in
	// status queued or running only (a run reaches every other state
	// through Transition). Either all of it is recorded or none: a refused
	// start leaves no empty session or thread. It is the service's one
	// write before the agent starts, so a store should make it a single
	// transaction (one commit per request). It is the only way sessions,
	// threads and runs are created. A session and thread whose ids the
	// service has just made from the run's id (contract.OwnSessionID,
	// OwnThreadID) come with both flags false: no run can hold those ids,
	// and the checks would be the store's work for nothing on most
	// requests. A store may rely on that derivation to find a session's
	// or thread's first run by its id (contract.OpenerID); ids made any
	// other way (a conversation's session, a store written before) must
	// still be found. When r.LeaseFor is positive, the run's lease
	// expiry is the host's clock (time.Now) when the store executes the
	// start, in its transaction just before the run's row is inserted,
	// plus r.LeaseFor, not r.LeaseExpiresAt; the expiry written is set
	// in r.LeaseExpiresAt once the start committed.
	StartRun(ctx context.Context, r *Run, newSession, newThread bool) error
	// Transition moves run id to a new state and records what goes with it.
	// It refuses (returns ErrNotFound) when the run is already terminal,
	// so the first terminal write wins.
	Transition(ctx context.Context, id string, t Transition) error
	// GetRun returns one run; tenantID "" means any tenant (admin).
	GetRun(ctx context.Context, tenantID, id string) (Run, error)
	// ListRuns returns runs newest first.
	ListRuns(ctx context.Context, q ListQuery) (runs []Run, hasMore bool, err error)
	// MarkInterrupted marks the queued or running runs of host hostID
	// failed with reason interrupted and returns how many: start-up
	// recovery after a crash of that host, or `runedge runs recover --host`
	// for a host that will not come back. Runs of other hosts are left
	// alone (they may be live); runs recorded before hosts had ids
	// (host_id "") count as every host's.
	MarkInterrupted(ctx context.Context, hostID string, at int64) (int64, error)
	// PurgeBefore forgets the stored input and output (request JSON,
	// output text) of runs that ended before the Unix time before, keeping
	// the run rows (store.retention), and returns how many runs it
	// emptied.
	PurgeBefore(ctx context.Context, before int64) (int64, error)
	Close() error
}

// CancelRelay is implemented by stores shared by several hosts
// (PostgreSQL): it carries a native cancel from the host that received it
// to the host that runs the run. A store of one host (SQLite) has no need
// of it.
type CancelRelay interface {
	// RelayCancel asks host hostID to cancel its run runID.
	RelayCancel(ctx context.Context, hostID, runID string) error
	// ListenCancels calls cancel with the id of every run relayed to host
	// hostID until ctx ends. It returns once it listens (an error when it
	// cannot); delivery goes on in the background, reconnecting as needed.
	ListenCancels(ctx context.Context, hostID string, cancel func(runID string)) error
}

// Transition is a state change of a run.
type Transition struct {
	Status    Status
	Reason    string
	StartedAt *int64
	EndedAt   *int64
	Usage     *Usage
	Output    string
	Error     *ErrorInfo
	// Attempts, when positive, records the agent's provider calls.
	Attempts int
	// DurationMs and TimeToFirstTokenMs, when set, record the run's
	// timings (Run.DurationMs, Run.TimeToFirstTokenMs).
	DurationMs, TimeToFirstTokenMs *int64
	// Ledger, when set, is the run's usage line (usage.go), written with a
	// terminal transition in the same commit, once per run.
	Ledger *UsageEntry
	// Lease, when not 0, fences the write: it is made only while the run's
	// lease token is still Lease, and refused with ErrFenced otherwise
	// (another host took the run over). A write to a status other than
	// queued or running also ends the lease.
	Lease int64
}

// ListQuery filters and pages ListRuns. TenantID "" means every tenant.
type ListQuery struct {
	TenantID  string
	SessionID string
	Status    Status
	// After is a run id: return runs older than it.
	After string
	Limit int
}
