package runner

import (
	"context"
	"errors"
)

// Leases: a run is executed under a lease held by one host, with a fencing
// token that changes at every acquisition (RATIONALE.md "Leases and
// fencing"). The lease is taken with the run's start insert (Run.LeaseToken,
// Run.LeaseExpiresAt: no statement of its own), its first expiry counted
// from that write (Run.LeaseFor), renewed for all the runs a host holds in
// one statement per interval, ended by the run's first write to a status
// other than queued or running, and every write the run makes
// after its start is conditional on the token (Transition.Lease). When a
// lease runs out, because its host crashed, froze or was scaled away, any
// live host takes the run over, exactly once across the fleet
// (AcquireExpired), with a new token: the late writes of the old holder are
// refused (ErrFenced).

// ErrFenced: a write was refused because the run's lease is no longer the
// writer's: another host (or this one, after a restart) took the run over.
var ErrFenced = errors.New("run's lease is held by another acquisition")

// Lease names a lease a host holds: a run and the token it acquired.
type Lease struct {
	RunID string
	Token int64
}

// LeaseClaim is what AcquireExpired takes over.
type LeaseClaim struct {
	// HostID is the host taking the runs over; their host_id becomes it.
	HostID string
	// Now is the present, in Unix milliseconds: leases that ran out
	// before it are taken. Until is when the taken leases run out.
	Now, Until int64
	// DeadHost, when not "", is a host known to be gone (this host at its
	// start, whose previous process left its runs): its runs are taken
	// whatever their leases say, together with runs recorded without a
	// host or a lease by an older version (as MarkInterrupted did).
	DeadHost string
	// Limit bounds how many runs are taken (0: no bound).
	Limit int
}

// LeaseStore is implemented by stores that keep leases (both drivers).
type LeaseStore interface {
	// RenewLeases moves to until (Unix ms) the expiry of every lease in
	// held that is still held (its run queued or running with that
	// token), in one statement, and returns the run ids of the others:
	// leases lost to a takeover, or runs that ended.
	RenewLeases(ctx context.Context, held []Lease, until int64) (lost []string, err error)
	// AcquireExpired takes over the queued and running runs whose lease
	// ran out before c.Now (and those of c.DeadHost), each at most once
	// across every host sharing the store: host_id becomes c.HostID, the
	// token one more, the expiry c.Until. It returns them with their new
	// lease (Run.LeaseToken) and the recorded request.
	AcquireExpired(ctx context.Context, c LeaseClaim) ([]Run, error)
	// ReleaseLeases ends the leases in held still held, at once (their
	// expiry becomes 0), so that another host takes the runs over without
	// waiting: a host shutting down hands its background runs to the
	// fleet.
	ReleaseLeases(ctx context.Context, held []Lease) error
}
