package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"unsafe"

	"github.com/runedge/runedge/runner/store/internal/itemref"
)

// A recorded request that begins with what an earlier run of its tenant
// recorded is kept by reference (itemref, request.go; migration 15): its
// run_requests row names the base's seq and how many bytes it shares,
// and holds the rest behind a header byte. Every request of
// runner.SharedRequestMin bytes or more is a row of run_requests with the
// hash of its whole input's prefix, for the runs after it to find.
const (
	// A base is the longest indexed prefix of the tenant among the
	// request's hashed ones (itemref.Window hashes, NULL for those it has
	// not), the shallowest of equals. Rows that share a hash share its
	// prefix, so the index (migration 17) gives each hash's shallowest
	// first and the lookup reads one row per hash, however many runs sent
	// the same request (BenchmarkSamePrefix).
	findRequestBaseSQL = windowHashes + requestBaseOfHashes
	// findNearRequestBaseSQL is findRequestBaseSQL over the longest
	// nearHashes prefixes only: a turn resends the history its last turn
	// recorded and adds a few messages, so its base is nearly always
	// among them, and each hash is an index seek. Where it finds a base
	// that base is the longest of all (a shorter hash's rows have a
	// shorter prefix), so findRequestBaseSQL is asked only when it finds
	// none.
	findNearRequestBaseSQL = `WITH h(v) AS (VALUES (?2), (?3), (?4), (?5)) ` + requestBaseOfHashes
	requestBaseOfHashes    = `SELECT r.seq, r.prefix_len, r.depth FROM h JOIN run_requests r ON r.seq = (
		SELECT q.seq FROM run_requests q WHERE q.tenant_id = ?1 AND q.prefix_hash = h.v AND q.prefix_hash IS NOT NULL
		ORDER BY q.depth LIMIT 1)
		ORDER BY r.prefix_len DESC, r.depth LIMIT 1`
	insertSharedRequestSQL = `INSERT INTO run_requests (seq, base_seq, shared, depth, tenant_id, prefix_hash, prefix_len, request)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	// chainSQL reads a request's row and its bases', the request's first,
	// at most itemref.RequestDepth; a base is of the same tenant.
	chainSQL = `WITH RECURSIVE chain(seq, base_seq, shared, tenant_id, request, n) AS (
			SELECT seq, base_seq, shared, tenant_id, request, 0 FROM run_requests WHERE seq = %s
			UNION ALL
			SELECT q.seq, q.base_seq, q.shared, q.tenant_id, q.request, c.n + 1 FROM run_requests q
			JOIN chain c ON q.seq = c.base_seq AND q.tenant_id = c.tenant_id WHERE c.n + 1 < ?
		) SELECT shared, request FROM chain ORDER BY n`
)

// nearHashes is how many of a request's longest prefixes
// findNearRequestBaseSQL looks up (its parameters ?2 to ?5).
const nearHashes = 4

var (
	chainOfRunSQL = fmt.Sprintf(chainSQL, `(SELECT seq FROM runs WHERE id = ?)`)
	chainOfSeqSQL = fmt.Sprintf(chainSQL, `?`)
)

// sharedRequest is what StartRun needs to keep a request by reference:
// the request as recorded and its prefixes' hashes, longest first.
type sharedRequest struct {
	request []byte
	hashes  [][]byte
	lens    []int
}

// writeRequest writes run seq's request row, kept by reference to the
// base it finds, or whole when it finds none or that base is
// itemref.RequestDepth deep; either way indexed by its input's prefix.
func (s *Store) writeRequest(ctx context.Context, tx *wtx, seq int64, tenantID string, q *sharedRequest) error {
	args := make([]any, 1+itemref.Window)
	args[0] = tenantID
	for i, h := range q.hashes {
		args[1+i] = h
	}
	var base, depth sql.NullInt64
	var n int
	err := tx.StmtContext(ctx, s.st.findNearRequestBase).QueryRowContext(ctx, args[:1+nearHashes]...).Scan(&base, &n, &depth)
	if errors.Is(err, sql.ErrNoRows) && len(q.hashes) > nearHashes {
		// The rest, those looked up as NULL: none of them has a row
		// (the writer's transaction, which no other writes).
		clear(args[1 : 1+nearHashes])
		err = tx.StmtContext(ctx, s.st.findRequestBase).QueryRowContext(ctx, args...).Scan(&base, &n, &depth)
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("request base: %w", err)
	}
	stored, shared, d := q.request, 0, int64(0)
	if base.Valid && depth.Int64+1 < itemref.RequestDepth && n > 0 && n <= len(q.request) {
		stored, shared, d = itemref.SharedRequest(q.request, n), n, depth.Int64+1
	} else {
		base.Valid = false
	}
	var baseArg any
	if base.Valid {
		baseArg = base.Int64
	}
	// The request bound as text without a copy: the driver copies it
	// into SQLite's memory as it binds, and tx.exec keeps no argument.
	_, err = tx.exec(ctx, s.st.insertSharedRequest, seq, baseArg, int64(shared), d, tenantID,
		q.hashes[0], int64(q.lens[0]), unsafe.String(unsafe.SliceData(stored), len(stored)))
	return err
}

// rowsQueryer is the readers or the writer's connection.
type rowsQueryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// resolveRequest returns the request a chain stores (chainOfRunSQL or
// chainOfSeqSQL with its argument), nil when the run keeps none.
func resolveRequest(ctx context.Context, q rowsQueryer, query string, arg any) ([]byte, error) {
	rows, err := q.QueryContext(ctx, query, arg, itemref.RequestDepth)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var chain []itemref.Piece
	for rows.Next() {
		var p itemref.Piece
		var shared int64
		if err := rows.Scan(&shared, &p.Stored); err != nil {
			return nil, err
		}
		p.Shared = int(shared)
		chain = append(chain, p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(chain) == 0 {
		return nil, nil // purged or deleted since the run was read
	}
	return itemref.Resolve(chain)
}

// dropRequests deletes the request rows of the runs whose seq sel selects
// (args are its parameters): first each request of another run kept by
// reference to one of them is written whole, so no run loses its request
// with its base.
func dropRequests(ctx context.Context, tx *wtx, sel string, args ...any) error {
	rows, err := tx.c.QueryContext(ctx, `SELECT seq FROM run_requests WHERE base_seq IN (`+sel+`)
		AND seq NOT IN (`+sel+`)`, append(append([]any{}, args...), args...)...)
	if err != nil {
		return err
	}
	var referrers []int64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			rows.Close()
			return err
		}
		referrers = append(referrers, seq)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, seq := range referrers {
		whole, err := resolveRequest(ctx, tx.c, chainOfSeqSQL, seq)
		if err != nil {
			return fmt.Errorf("request of seq %d: %w", seq, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE run_requests SET request = ?, base_seq = NULL, shared = 0, depth = 0
			WHERE seq = ?`, string(whole), seq); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM run_requests WHERE seq IN (`+sel+`)`, args...)
	return err
}
