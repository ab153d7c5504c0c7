package sqlite

import (
	"context"
	"database/sql"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Start-up recovery (MarkInterrupted) finds the runs a host left queued
// or running by scanning runs from the host's low-water mark, a seq below
// which the host has no such run, kept in live_marks (migration 9). Until
// migration 9 a partial index, runs_live, held exactly those runs: every
// run went into it at StartRun and out of it at its end, so its page was
// written to the WAL twice per run, two of a run's nine frames at one
// connection (RATIONALE.md "Recovery from a low-water mark (SQLite)").
//
// The invariant, for every host h: each run of h in status queued or
// running has seq ≥ live_marks.low_seq of h, and a host without a row has
// no such run. What keeps it:
//   - StartRun gives a host its row, with the new run's seq, in the run's
//     own transaction, the first time this Store writes a run of a host
//     that has none (later runs get larger seqs);
//   - a Transition to queued or running of a run this Store does not
//     know as live (a waiting run resumed) lowers the mark to the run's
//     seq in the same transaction;
//   - MarkInterrupted, having failed every such run of the host, moves
//     the mark past the last run;
//   - the mark of a host this process recovered (so every live run of it
//     is one this Store started or resumed) is raised, at most once per
//     interval, inside a run's terminal write, to the least seq of its
//     live runs (that run's own, at most), so that a crash scans only
//     the runs since the oldest one live then;
//   - the takeover scan (AcquireExpired), at most once a sweepEvery,
//     raises every host's mark to the least seq of its queued or running
//     runs, or past the last run when it has none, in its own write
//     transaction: a host that is gone (a new host id after a restart, a
//     host that left the fleet) raises its mark no more, and the takeover
//     scan, which starts at the least mark of all hosts, would otherwise
//     scan every run since that host's last raise every few seconds,
//     more with every run. The write transactions of every process on
//     the file are serialised, so no run committed after the sweep's
//     read is below what it writes (a new run's seq is past the last),
//     and it never lowers a mark.
//
// The in-memory record errs low: a run counts as live from inside its
// write until its terminal write has committed, so a batch that is rolled
// back and run again (groupcommit) never raises a mark past a live run.
// PostgreSQL keeps runs_live: its hosts share the database and its seq
// comes from a sequence, so no host knows which seqs the others hold.
type liveMarks struct {
	every time.Duration // the least time between two raises of a mark
	next  atomic.Int64  // UnixNano before which no mark is raised
	// sweepAt is the UnixNano before which the takeover scan raises no
	// other host's mark (sweepMarksSQL); 0 at Open, so the first scan
	// sweeps. sweepEvery is sweepEvery, shorter in tests.
	sweepAt    atomic.Int64
	sweepEvery time.Duration

	mu     sync.Mutex
	marked map[string]bool    // hosts with a committed row
	owned  map[string]bool    // hosts recovered here: their marks may be raised
	live   map[string]liveRun // runs started or resumed here, not ended
	raised map[string]int64   // a raise's value, per owned host, as last written
}

// liveRun is a run this Store counts as queued or running.
type liveRun struct {
	host string
	seq  int64
}

// DefaultMarkEvery is how often a host's low-water mark is raised at most
// when none is configured: a write of one small row per second under
// load, and a crash scans the runs of about a second (and those since the
// oldest run still live).
const DefaultMarkEvery = time.Second

const (
	insertMarkSQL = `INSERT INTO live_marks (host_id, low_seq) VALUES (?, ?) ON CONFLICT (host_id) DO NOTHING`
	lowerMarkSQL  = `INSERT INTO live_marks (host_id, low_seq) VALUES (?, ?)
		ON CONFLICT (host_id) DO UPDATE SET low_seq = MIN(low_seq, excluded.low_seq)`
	// raiseMarkSQL raises a mark and never lowers it. Its value is a live
	// run's seq (raiseOf), so it never passes the last run.
	raiseMarkSQL = `UPDATE live_marks SET low_seq = MAX(low_seq, ?) WHERE host_id = ?`
	runSeqSQL    = `SELECT seq, host_id FROM runs WHERE id = ?`
	// sweepMarksSQL raises each host's mark to the least seq of its
	// queued or running runs at or above it, or past the last run when
	// it has none; never lower.
	sweepMarksSQL = `UPDATE live_marks SET low_seq = MAX(low_seq, COALESCE(
			(SELECT MIN(seq) FROM runs WHERE seq >= live_marks.low_seq
				AND host_id = live_marks.host_id AND status IN ('queued', 'running')),
			(SELECT COALESCE(MAX(seq), 0) + 1 FROM runs)))`
)

// sweepEvery is how often, at most, the takeover scan raises every
// host's mark (sweepMarksSQL): each sweep scans, per host, the runs since
// its mark, so a gone host's mark holds the takeover scan's start back
// by at most the runs of this interval.
const sweepEvery = time.Minute

// sweepDue reports whether a sweep of the marks is due now, and if so
// puts the next one a sweepEvery away.
func (m *liveMarks) sweepDue() bool {
	now := time.Now().UnixNano()
	at := m.sweepAt.Load()
	return now >= at && m.sweepAt.CompareAndSwap(at, now+m.sweepEvery.Nanoseconds())
}

func newLiveMarks(every time.Duration) *liveMarks {
	if every <= 0 {
		every = DefaultMarkEvery
	}
	return &liveMarks{
		every: every, sweepEvery: sweepEvery, marked: map[string]bool{}, owned: map[string]bool{},
		live: map[string]liveRun{}, raised: map[string]int64{},
	}
}

// load reads which hosts have a row, at Open.
func (m *liveMarks) load(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT host_id FROM live_marks`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return err
		}
		m.marked[h] = true
	}
	return rows.Err()
}

// isMarked reports whether host has a committed row.
func (m *liveMarks) isMarked(host string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.marked[host]
}

// setMarked records that host's row has committed.
func (m *liveMarks) setMarked(host string) {
	m.mu.Lock()
	m.marked[host] = true
	m.mu.Unlock()
}

// isLive reports whether run id is one this Store counts as live.
func (m *liveMarks) isLive(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.live[id]
	return ok
}

// add counts run id (of host, at seq) as live.
func (m *liveMarks) add(id, host string, seq int64) {
	m.mu.Lock()
	m.live[id] = liveRun{host, seq}
	m.mu.Unlock()
}

// remove stops counting run id as live: its terminal (or waiting) write
// has committed, or the write that would have made it live did not.
func (m *liveMarks) remove(id string) {
	m.mu.Lock()
	delete(m.live, id)
	m.mu.Unlock()
}

// own records that host was recovered here (MarkInterrupted): from now on
// every live run of it is one this Store starts or resumes, and its mark
// past the last run is committed. The runs of host and of "" this Store
// counted as live were failed with the rest, so they count no longer.
func (m *liveMarks) own(host string) {
	m.mu.Lock()
	for id, r := range m.live {
		if r.host == host || r.host == "" {
			delete(m.live, id)
		}
	}
	m.owned[host] = true
	m.marked[host] = true
	m.raised[host] = math.MaxInt64
	m.mu.Unlock()
}

// raiseOf returns the value to raise run id's host's mark to, and false
// when no raise is due: the interval has not passed, the run is not one
// of this Store's, or its host is not owned here or its least live seq
// has not moved. Called inside the run's terminal write, where the run
// still counts as live, so the value is at most its seq. The live runs
// are scanned at most once an interval, whether or not the mark moves:
// while one long run holds it down, every other run's end would otherwise
// scan them all under the lock.
func (m *liveMarks) raiseOf(id string) (host string, low int64, ok bool) {
	now := time.Now().UnixNano()
	if now < m.next.Load() {
		return "", 0, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.live[id]
	if !ok || !m.owned[r.host] {
		return "", 0, false
	}
	m.next.Store(now + m.every.Nanoseconds())
	low = int64(math.MaxInt64)
	for _, l := range m.live {
		if l.host == r.host && l.seq < low {
			low = l.seq
		}
	}
	if low == m.raised[r.host] {
		return "", 0, false
	}
	return r.host, low, true
}

// raised records the value a committed raise wrote for host.
func (m *liveMarks) setRaised(host string, low int64) {
	m.mu.Lock()
	m.raised[host] = low
	m.mu.Unlock()
}
