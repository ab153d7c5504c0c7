package postgres

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/runedge/runedge/runner/store/internal/itemref"
)

// A recorded request that begins with what an earlier run of its tenant
// recorded is kept by reference (itemref, request.go; migration 15): the
// run's row names the base (request_base) and how many bytes it shares,
// and its request holds a header byte and the rest. A request of
// runner.SharedRequestMin bytes or more indexes the hash of its input's
// prefix by tenant, for the runs after it to find.
//
// The base is looked up before the write, in the host's memory of recent
// bases (baseCache) or on the pool; the insert locks
// the base's row FOR SHARE and carries only the rest of the request (the
// bytes past the shared ones: a resent 230 KB history sends a few hundred
// bytes, not the whole body twice encoded by pgx). A purge or delete
// locks the rows it empties first (lockRequests), so an insert either
// commits before it and is written whole by it, or waits and finds the
// base emptied: it then fails on the server (request_shared NULL, see
// baseGone), and StartRun asks the database for another base (when the
// emptied one came from memory) or writes the whole request.
const (
	// Runs that share a hash share its prefix, so the index (migration
	// 17) gives each hash's shallowest first and the lookup reads one row
	// per hash, however many runs sent the same request
	// (BenchmarkSamePrefix).
	// The hashes come as one bytea of 32-byte hashes: pgx encodes a
	// [][]byte array by reflection, element by element, which was half
	// the lookup's CPU in runedge.
	findRequestBaseSQL = `SELECT r.id, r.request_prefix, r.request_depth FROM generate_series(0, length($2::bytea) / 32 - 1) AS h(i)
		CROSS JOIN LATERAL (SELECT id, request_prefix, request_depth FROM runs
			WHERE tenant_id = $1 AND request_hash = substring($2::bytea FROM h.i * 32 + 1 FOR 32) AND request_hash IS NOT NULL
			ORDER BY request_depth LIMIT 1) r
		ORDER BY r.request_prefix DESC, r.request_depth LIMIT 1`
	// chainSQL reads a run's request and its bases', the run's first, at
	// most itemref.RequestDepth; a base is of the same tenant.
	chainSQL = `WITH RECURSIVE chain(id, base, shared, tenant, request, n) AS (
			SELECT id, request_base, request_shared, tenant_id, request, 0 FROM runs WHERE id = $1
			UNION ALL
			SELECT r.id, r.request_base, r.request_shared, r.tenant_id, r.request, c.n + 1 FROM runs r
			JOIN chain c ON r.id = c.base AND r.tenant_id = c.tenant WHERE c.n + 1 < $2
		) SELECT shared, request FROM chain ORDER BY n`
)

// insertRunIndexedSQL is insertRunSQL(session) for a request kept whole
// that indexes the hash ($31) and length ($32) of its input's prefix, for
// the runs after it to find.
func insertRunIndexedSQL(session string) string {
	return replaceIn(insertRunSQL(session), [][2]string{
		{`lease_token, lease_expires
	) VALUES`, `lease_token, lease_expires, request_hash, request_prefix
	) VALUES`},
		{`$29, $30)`, `$29, $30, $31, $32)`},
	})
}

// insertRunTailSQL is insertRunSQL(session) for a request kept by
// reference to base $31, found before the write: $22 is the request past
// its first $32 bytes, the base's, $33 the depth it has, $34 and $35 the
// hash and length of its input's prefix. The database never sees the
// shared bytes. The insert locks the base's row FOR SHARE; a base emptied
// since it was looked up leaves request_shared NULL, which the column
// refuses (baseGone): the batch aborts, group commit retries its writes
// alone, and startShared looks again or writes this one whole
// (insertRunIndexedSQL).
func insertRunTailSQL(session string) string {
	q := replaceIn(insertRunSQL(session), [][2]string{
		{`lease_token, lease_expires
	) VALUES`, `lease_token, lease_expires, request_base, request_shared, request_depth, request_hash, request_prefix
	) VALUES`},
		{`$21, $22, $23`, `$21, chr(2) || $22::text, $23`},
		{`$29, $30)`, `$29, $30, (SELECT id FROM b), CASE WHEN EXISTS (SELECT 1 FROM b) THEN $32::int END,
		$33::int, $34, $35)`},
	})
	return `WITH b AS (SELECT id FROM runs WHERE id = $31 AND tenant_id = $9 AND request IS NOT NULL FOR SHARE) ` + q
}

// replaceIn is q with each pair's first replaced by its second: a change
// of insertRunSQL that leaves one of them out fails at start (every
// test).
func replaceIn(q string, pairs [][2]string) string {
	for _, r := range pairs {
		if strings.Count(q, r[0]) != 1 {
			panic("runner/store/postgres: insertRunSQL no longer has " + r[0])
		}
		q = strings.Replace(q, r[0], r[1], 1)
	}
	return q
}

var (
	insertRunIndexedPlainSQL      = insertRunIndexedSQL(`$4`)
	insertRunIndexedNewSessionSQL = insertRunIndexedSQL(newSessionCheck)
	insertRunIndexedInSessionSQL  = insertRunIndexedSQL(inSessionCheck)
	insertRunTailPlainSQL         = insertRunTailSQL(`$4`)
	insertRunTailNewSessionSQL    = insertRunTailSQL(newSessionCheck)
	insertRunTailInSessionSQL     = insertRunTailSQL(inSessionCheck)
)

// baseGone reports the refusal of an insertRunTailSQL whose base no
// longer held its request when the insert locked it.
func baseGone(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23502" && pe.TableName == "runs" && pe.ColumnName == "request_shared"
}

// findRequestBase returns the run whose request begins with the longest
// of hashes' prefixes, how many bytes that is and the depth of its
// reference ("": none).
func (s *Store) findRequestBase(ctx context.Context, tenantID string, hashes [][]byte) (string, int, int, error) {
	var base string
	var n, depth int
	joined := make([]byte, 0, len(hashes)*sha256.Size)
	for _, h := range hashes {
		if len(h) != sha256.Size {
			return "", 0, 0, fmt.Errorf("a request prefix hash of %d bytes", len(h))
		}
		joined = append(joined, h...)
	}
	err := s.pool.QueryRow(ctx, findRequestBaseSQL, tenantID, joined).Scan(&base, &n, &depth)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", 0, 0, nil
	}
	return base, n, depth, err
}

// bases remembers, per tenant and prefix hash, a run that indexes it:
// the runs this host wrote and the bases it found. A resending session's
// next turn on the same host finds its base here, without the lookup's
// round trip (the largest part of StartRun once the request's shared
// bytes stayed home: RATIONALE.md "The shared bytes stay home").
// It may be stale, and needs no invalidation: the insert checks the base
// on the server (insertRunTailSQL), and a base emptied since is forgotten
// here when its insert is refused, and the database asked (startShared).
// What it may miss is a longer prefix
// another host wrote (a session whose turns move between hosts): that
// run is then kept against an older turn, a longer rest, never wrongly.
// Bounded (maxBaseCache entries of about 150 bytes); the zero value is
// ready.
type baseCache struct {
	mu sync.Mutex
	m  map[baseKey]requestBase
}

type baseKey struct {
	tenant string
	hash   [sha256.Size]byte
}

// requestBase is a run whose request begins with prefix bytes that hash
// to its key, and the depth of its own reference (0: kept whole).
type requestBase struct {
	id            string
	prefix, depth int
}

const maxBaseCache = 1 << 12

// find returns the base of the longest of hashes (the longest first,
// lens their lengths) that the cache holds.
func (c *baseCache) find(tenant string, hashes [][]byte, lens []int) (requestBase, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, h := range hashes {
		if len(h) != sha256.Size {
			return requestBase{}, false
		}
		if b, ok := c.m[baseKey{tenant, [sha256.Size]byte(h)}]; ok && b.prefix == lens[i] {
			return b, true
		}
	}
	return requestBase{}, false
}

// keep remembers b as a base for the prefix hash of tenant, unless a
// shallower one is known: the runs after it then share that one.
func (c *baseCache) keep(tenant string, hash []byte, b requestBase) {
	if len(hash) != sha256.Size || b.id == "" {
		return
	}
	k := baseKey{tenant, [sha256.Size]byte(hash)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[k]; ok && old.depth <= b.depth {
		return
	}
	if c.m == nil || len(c.m) >= maxBaseCache {
		c.m = make(map[baseKey]requestBase)
	}
	c.m[k] = b
}

// keepFound remembers the base the database found for one of hashes.
func (c *baseCache) keepFound(tenant string, hashes [][]byte, lens []int, b requestBase) {
	for i, n := range lens {
		if b.id != "" && n == b.prefix {
			c.keep(tenant, hashes[i], b)
			return
		}
	}
}

// forget drops run id, found emptied, as a base of tenant's.
func (c *baseCache) forget(tenant, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, b := range c.m {
		if k.tenant == tenant && b.id == id {
			delete(c.m, k)
		}
	}
}

// rowsQueryer is the pool or a transaction.
type rowsQueryer interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// resolveRequest returns run id's request, read through its chain of
// references; nil when the run keeps none (purged since it was read).
func resolveRequest(ctx context.Context, q rowsQueryer, id string) ([]byte, error) {
	rows, err := q.Query(ctx, chainSQL, id, itemref.RequestDepth)
	if err != nil {
		return nil, err
	}
	chain, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (itemref.Piece, error) {
		var p itemref.Piece
		var shared int32
		err := row.Scan(&shared, &p.Stored)
		p.Shared = int(shared)
		return p, err
	})
	if err != nil || len(chain) == 0 {
		return nil, err
	}
	return itemref.Resolve(chain)
}

// lockRequests locks the rows of the runs sel selects ($1 its parameter)
// that others may be based on: a purge or a delete takes these locks
// first, before any of the responses' rows, the order in which a turn's
// write takes them (its run's insert share-locks its request's base
// run, then its response's first write its base response). Taken after
// the response's row, as they were, a turn based on the run being
// emptied could hold the run's row while waiting for the response's,
// and the purge hold the response's while waiting for the run's: a
// deadlock (SQLSTATE 40P01) that failed one of them.
func lockRequests(ctx context.Context, tx pgx.Tx, sel string, arg any) error {
	_, err := tx.Exec(ctx, `SELECT 1 FROM runs WHERE id IN (`+sel+`) AND request_hash IS NOT NULL FOR UPDATE`, arg)
	return err
}

// dropRequests empties the requests of the runs sel selects ($1 its
// parameter), which lockRequests locked: it writes whole each request
// of another run kept by reference to one of them, then empties them
// (with their outputs, as a purge and a delete do). The rows it changed
// are returned.
func dropRequests(ctx context.Context, tx pgx.Tx, sel string, arg any) (int64, error) {
	rows, err := tx.Query(ctx, `SELECT id FROM runs WHERE request_base IN (`+sel+`) AND id NOT IN (`+sel+`)`, arg)
	if err != nil {
		return 0, err
	}
	referrers, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, err
	}
	for _, id := range referrers {
		whole, err := resolveRequest(ctx, tx, id)
		if err != nil {
			return 0, fmt.Errorf("request of %s: %w", id, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE runs SET request = $2, request_base = NULL, request_shared = 0, request_depth = 0
			WHERE id = $1`, id, string(whole)); err != nil {
			return 0, err
		}
	}
	tag, err := tx.Exec(ctx, `UPDATE runs SET request = NULL, output = '', output_ref = FALSE, request_base = NULL, request_shared = 0, request_hash = NULL
		WHERE id IN (`+sel+`) AND (request IS NOT NULL OR output <> '' OR output_ref)`, arg)
	return tag.RowsAffected(), err
}
