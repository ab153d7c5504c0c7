package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/runedge/runedge/runner"
)

// Leases (runner/lease.go) live in two columns of runs (migration 11): the
// start insert writes them, a terminal or waiting write ends them in its
// fenced UPDATE (transitionSQL). A renewal is one statement for every
// lease a host holds; a takeover locks the runs it takes with FOR UPDATE
// SKIP LOCKED, so two hosts scanning at once never take the same run: a
// run one of them locked is skipped by the other, and one it took has a
// lease that has not run out when the other's lock re-reads it.

var _ runner.LeaseStore = (*Store)(nil)

// leaseExpiresArg is the insert's lease_expires: NULL for a run without a
// lease, and for one whose lease counts from its write (Run.LeaseFor),
// whose expiry writeRun puts in place as its batch is made.
func leaseExpiresArg(r *runner.Run) any {
	if r.LeaseExpiresAt == 0 || r.LeaseFor > 0 {
		return nil
	}
	return r.LeaseExpiresAt
}

const (
	renewSQL = `UPDATE runs SET lease_expires = $1
		FROM unnest($2::text[], $3::bigint[]) AS held(rid, tok)
		WHERE runs.id = held.rid AND runs.lease_token = held.tok AND runs.status IN ('queued', 'running')
		AND runs.lease_expires IS NOT NULL
		RETURNING runs.id`
	// acquireSQL: $1 the new host, $2 the new expiry, $3 now, $4 the dead
	// hosts (none, or the dead one and ""), $5 the limit (NULL: none).
	// The runs are chosen and locked once, in a materialized CTE: as a
	// subquery of the UPDATE's WHERE, the planner may run it again, and
	// each run locks and takes more than the limit.
	acquireSQL = `WITH claim AS MATERIALIZED (
			SELECT id FROM runs
			WHERE status IN ('queued', 'running') AND (lease_expires < $3 OR host_id = ANY($4))
			ORDER BY seq LIMIT $5 FOR UPDATE SKIP LOCKED)
		UPDATE runs SET host_id = $1, lease_token = lease_token + 1, lease_expires = $2
		FROM claim WHERE runs.id = claim.id
		RETURNING runs.id`
)

func heldArrays(held []runner.Lease) ([]string, []int64) {
	ids, toks := make([]string, len(held)), make([]int64, len(held))
	for i, l := range held {
		ids[i], toks[i] = l.RunID, l.Token
	}
	return ids, toks
}

// RenewLeases extends the leases in held still held, in one statement.
func (s *Store) RenewLeases(ctx context.Context, held []runner.Lease, until int64) ([]string, error) {
	if len(held) == 0 {
		return nil, nil
	}
	ids, toks := heldArrays(held)
	rows, err := s.pool.Query(ctx, renewSQL, until, ids, toks)
	if err != nil {
		return nil, wrap("renew leases", err)
	}
	renewed, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, wrap("renew leases", err)
	}
	ok := make(map[string]bool, len(renewed))
	for _, id := range renewed {
		ok[id] = true
	}
	var lost []string
	for _, l := range held {
		if !ok[l.RunID] {
			lost = append(lost, l.RunID)
		}
	}
	return lost, nil
}

// ReleaseLeases ends the leases in held still held (expiry 0).
func (s *Store) ReleaseLeases(ctx context.Context, held []runner.Lease) error {
	if len(held) == 0 {
		return nil
	}
	ids, toks := heldArrays(held)
	rows, err := s.pool.Query(ctx, renewSQL, int64(0), ids, toks)
	if err != nil {
		return wrap("release leases", err)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return wrap("release leases", err)
	}
	return nil
}

// AcquireExpired takes over the runs whose lease ran out (and
// c.DeadHost's), each exactly once across the hosts.
func (s *Store) AcquireExpired(ctx context.Context, c runner.LeaseClaim) ([]runner.Run, error) {
	dead := []string{}
	if c.DeadHost != "" {
		dead = []string{c.DeadHost, ""}
	}
	var limit any
	if c.Limit > 0 {
		limit = c.Limit
	}
	rows, err := s.pool.Query(ctx, acquireSQL, c.HostID, c.Until, c.Now, dead, limit)
	if err != nil {
		return nil, wrap("acquire expired leases", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, wrap("acquire expired leases", err)
	}
	runs := make([]runner.Run, 0, len(ids))
	for _, id := range ids {
		r, err := s.GetRun(ctx, "", id)
		if err != nil {
			return runs, err
		}
		var exp *int64
		if err := s.pool.QueryRow(ctx, `SELECT lease_token, lease_expires FROM runs WHERE id = $1`, id).Scan(&r.LeaseToken, &exp); err != nil {
			return runs, wrap("read lease of run "+id, err)
		}
		if exp != nil {
			r.LeaseExpiresAt = *exp
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// refusalFenced explains why a fenced Transition changed nothing: the
// run's lease token is no longer lease (ErrFenced), or refusal's reasons.
func (s *Store) refusalFenced(ctx context.Context, id string, to runner.Status, lease int64) error {
	if lease != 0 {
		var tok int64
		err := s.pool.QueryRow(ctx, `SELECT lease_token FROM runs WHERE id = $1`, id).Scan(&tok)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return notFound("run", id)
		case err != nil:
			return wrap("transition run "+id, err)
		case tok != lease:
			return fmt.Errorf("%w: run %s has lease token %d, the write holds %d", runner.ErrFenced, id, tok, lease)
		}
	}
	return s.refusal(ctx, id, to)
}
