package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/internal/itemref"
)

// The response history (runner.HistoryStore), as in the SQLite driver.
// A stored response's first and last writes go through the group-commit
// writer like the run writes (pipelined, one round trip per batch): they
// never read before writing, so they fit its pipeline. A first write with
// more than groupedItems input items takes a transaction of its own (see
// the SQLite driver), as do stream event batches.

var _ runner.HistoryStore = (*Store)(nil)

// groupedItems: as in the SQLite driver.
const groupedItems = 256

const (
	insertResponseSQL = `INSERT INTO responses (run_id, tenant_id, previous_run_id, background, echo, input_hash, input_count)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`
	// A base (itemref) is the response of the tenant, not forgotten,
	// whose items begin with the longest of the input's hashed prefixes.
	// It is looked up before the write, on the pool; the write then
	// references it only if it is still not forgotten, in one statement
	// that locks the base's row FOR SHARE: a delete of the base waits for
	// the write and then finds the referrer (responses_base), or went
	// first and the base is not used.
	// Responses that share a hash share its prefix, so one per hash is
	// enough: the lookup reads at most two rows per hash however many
	// responses of the tenant began alike (BenchmarkSamePrefix).
	findBaseSQL = `SELECT run_id, n FROM (
			SELECT r.run_id, r.prefix_count AS n FROM unnest($2::bytea[]) AS h(v)
			CROSS JOIN LATERAL (SELECT run_id, prefix_count FROM responses
				WHERE tenant_id = $1 AND prefix_hash = h.v AND prefix_hash IS NOT NULL AND NOT forgotten LIMIT 1) r
			UNION ALL
			SELECT r.run_id, r.input_count FROM unnest($2::bytea[]) AS h(v)
			CROSS JOIN LATERAL (SELECT run_id, input_count FROM responses
				WHERE tenant_id = $1 AND input_hash = h.v AND input_hash IS NOT NULL AND NOT forgotten LIMIT 1) r
		) b ORDER BY n DESC LIMIT 1`
	insertBasedSQL = `WITH pin AS (
			SELECT run_id FROM responses WHERE run_id = $6 AND tenant_id = $2 AND NOT forgotten FOR SHARE
		)
		INSERT INTO responses (run_id, tenant_id, previous_run_id, background, echo, base_run_id, base_count,
			input_hash, input_count)
		SELECT $1, $2, $3, $4, $5, COALESCE((SELECT run_id FROM pin), ''),
			CASE WHEN EXISTS (SELECT 1 FROM pin) THEN $7::int ELSE 0 END, $8, $9`
	// The items a based response shares are written only if its base
	// was not kept (a delete went first): they travel with the write.
	insertSharedSQL = `INSERT INTO response_items (id, run_id, tenant_id, position, output, message)
		SELECT u.id, $1, $2, u.pos, FALSE, u.msg FROM unnest($3::text[], $4::int[], $5::text[]) AS u(id, pos, msg)
		WHERE EXISTS (SELECT 1 FROM responses WHERE run_id = $1 AND base_run_id = '')`
	// A response's end indexes its input and output together (the
	// prefix a resending client's next turn begins with), with its
	// object ("": kept as it is), fenced as setObjectSQL.
	setEndSQL = `UPDATE responses SET object = CASE WHEN $1 <> '' THEN $1 ELSE object END, prefix_hash = $4, prefix_count = $5
		WHERE run_id = $2 AND NOT deleted
		AND ($3::bigint = 0 OR EXISTS (SELECT 1 FROM runs WHERE id = $2 AND lease_token = $3))`
	insertItemSQL = `INSERT INTO response_items (id, run_id, tenant_id, position, output, message)
		VALUES ($1, $2, $3, $4, $5, $6)`
	// A response deleted while it ran matches no row: nothing is kept of
	// it. An output item takes its tenant and position (after the items
	// already there) from the database. A joined end is fenced as its
	// Transition is (the last parameter: the lease token, 0 for none): it
	// is queued after that write and runs whether or not the write
	// changed a row.
	setObjectSQL = `UPDATE responses SET object = $1 WHERE run_id = $2 AND NOT deleted
		AND ($3::bigint = 0 OR EXISTS (SELECT 1 FROM runs WHERE id = $2 AND lease_token = $3))`
	insertOutputSQL = `INSERT INTO response_items (id, run_id, tenant_id, position, output, message)
		SELECT $1, r.run_id, r.tenant_id,
			COALESCE((SELECT MAX(position) + 1 FROM response_items WHERE run_id = r.run_id), r.base_count), $2, $3
		FROM responses r WHERE r.run_id = $4 AND NOT r.deleted
		AND ($5::bigint = 0 OR EXISTS (SELECT 1 FROM runs WHERE id = $4 AND lease_token = $5))`
	outputTextSQL = `SELECT message FROM response_items WHERE run_id = $1 AND output ORDER BY position LIMIT 1`
)

// BeginResponse implements runner.HistoryStore. The run's recorded
// request, written already, loses its input if it holds exactly these
// items (itemref.Elide).
func (s *Store) BeginResponse(ctx context.Context, rec runner.ResponseRecord, input []runner.Item) error {
	b, err := s.begin(ctx, rec, input)
	if err != nil {
		return wrap("begin response "+rec.RunID, err)
	}
	write := func(p *pipe) {
		b.queue(p)
		pfx := itemref.ElidedPrefix(b.msgs)
		p.exec(`UPDATE runs SET request = chr(1) || substr(request, $3 + 1) WHERE id = $1 AND left(request, $3) = $2`,
			rec.RunID, pfx, utf8.RuneCountInString(pfx))
	}
	if len(input) > groupedItems {
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			p := &pipe{}
			write(p)
			return tx.SendBatch(ctx, &p.b).Close()
		})
	} else {
		err = s.writer.Do(ctx, func(_ context.Context, p *pipe) error {
			write(p)
			return nil
		})
	}
	if err != nil {
		s.pending.Drop(rec.RunID)
		return wrap("begin response "+rec.RunID, err)
	}
	return nil
}

// beginning is a response's first write, ready to queue.
type beginning struct {
	rec   runner.ResponseRecord
	input []runner.Item
	msgs  []string
	base  string // the base found, "" for none
	from  int    // how many items it shares
	// inHash is the input's hash (nil: not indexed), of inCount items.
	inHash  []byte
	inCount int
}

// begin encodes the input, hashes its prefixes and looks up a base.
func (s *Store) begin(ctx context.Context, rec runner.ResponseRecord, input []runner.Item) (*beginning, error) {
	msgs, err := encodeMessages(input)
	if err != nil {
		return nil, err
	}
	hashes, lens, h := itemref.Prefixes(msgs)
	s.pending.Put(rec.RunID, rec.TenantID, h, itemref.Size(msgs), rec.Echo)
	b := &beginning{rec: rec, input: input, msgs: msgs}
	if !itemref.Worth(msgs) {
		return b, nil
	}
	b.inHash, b.inCount = hashes[0], len(msgs) // the input's own, indexed
	share := itemref.Shareable(rec.RunID, input)
	if share == 0 {
		return b, nil
	}
	var n int
	err = s.pool.QueryRow(ctx, findBaseSQL, rec.TenantID, hashes).Scan(&b.base, &n)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return b, nil
	case err != nil:
		return nil, err
	case !slices.Contains(lens, n):
		b.base = ""
		return b, nil
	}
	b.from = min(n, share)
	return b, nil
}

// queue queues the first write.
func (b *beginning) queue(p *pipe) {
	rec := b.rec
	if b.base == "" || b.from == 0 {
		p.exec(insertResponseSQL, rec.RunID, rec.TenantID, rec.PreviousRunID, rec.Background, string(rec.Echo), b.inHash, b.inCount)
		for i, it := range b.input {
			p.exec(insertItemSQL, it.ID, rec.RunID, rec.TenantID, i, it.Output, b.msgs[i])
		}
		return
	}
	p.exec(insertBasedSQL, rec.RunID, rec.TenantID, rec.PreviousRunID, rec.Background, string(rec.Echo), b.base, b.from,
		b.inHash, b.inCount)
	ids, pos := make([]string, b.from), make([]int32, b.from)
	for i := range b.from {
		ids[i], pos[i] = b.input[i].ID, int32(i)
	}
	p.exec(insertSharedSQL, rec.RunID, rec.TenantID, ids, pos, b.msgs[:b.from])
	for i := b.from; i < len(b.input); i++ {
		it := b.input[i]
		p.exec(insertItemSQL, it.ID, rec.RunID, rec.TenantID, i, it.Output, b.msgs[i])
	}
}

// EndResponse implements runner.HistoryStore. The object is kept compact
// (runner.CompactObject).
func (s *Store) EndResponse(ctx context.Context, runID string, object []byte, output []runner.Item) error {
	msgs, err := encodeMessages(output)
	if err != nil {
		return wrap("end response "+runID, err)
	}
	object = runner.CompactObject(object, runID, runner.OutputText(output), s.pending.Echo(runID))
	pfx := s.prefix(runID, msgs)
	err = s.writer.Do(ctx, func(_ context.Context, p *pipe) error {
		endResponse(p, runID, 0, object, output, msgs, pfx)
		return nil
	})
	if err != nil {
		return wrap("end response "+runID, err)
	}
	return nil
}

var _ runner.HistoryJoiner = (*Store)(nil)

// JoinBegin implements runner.HistoryJoiner: BeginResponse's statements
// are queued after StartRun's in the same pipelined batch, except for an
// input too large for a shared batch (groupedItems). StartRun then keeps
// the run's request without the input (itemref.Elide).
func (s *Store) JoinBegin(ctx context.Context, rec runner.ResponseRecord, input []runner.Item) (context.Context, func() bool) {
	if len(input) > groupedItems {
		return ctx, runner.NotJoined // written alone
	}
	b, err := s.begin(ctx, rec, input)
	if err != nil {
		return ctx, runner.NotJoined // BeginResponse will say why
	}
	ctx = itemref.WithElision(ctx, rec.RunID, b.msgs)
	ctx, r := s.writer.WithRider(ctx, func(_ context.Context, p *pipe) error {
		b.queue(p)
		return nil
	})
	return ctx, r.Committed
}

// JoinEnd implements runner.HistoryJoiner: EndResponse's statements are
// queued after the terminal Transition's, fenced by the same lease token.
func (s *Store) JoinEnd(ctx context.Context, runID string, lease int64, object []byte, output []runner.Item) (context.Context, func() bool) {
	msgs, err := encodeMessages(output)
	if err != nil {
		return ctx, runner.NotJoined
	}
	object = runner.CompactObject(object, runID, runner.OutputText(output), s.pending.Echo(runID))
	pfx := s.prefix(runID, msgs)
	// The terminal Transition keeps the run's output text by reference to
	// the output item when it is that item's (itemref.OutputElided).
	ctx = itemref.WithOutput(ctx, runID, output)
	ctx, r := s.writer.WithRider(ctx, func(_ context.Context, p *pipe) error {
		endResponse(p, runID, lease, object, output, msgs, pfx)
		return nil
	})
	return ctx, r.Committed
}

// prefix is the index entry of a response's input and output (itemref),
// nil when its input's hash was not kept here.
func (s *Store) prefix(runID string, msgs []string) []any {
	sum, _, n, ok := s.pending.Sum(runID, msgs)
	s.pending.Drop(runID)
	if !ok {
		return nil
	}
	return []any{sum, n}
}

func endResponse(p *pipe, runID string, lease int64, object []byte, output []runner.Item, msgs []string, prefix []any) {
	switch {
	case prefix != nil:
		p.exec(setEndSQL, string(object), runID, lease, prefix[0], prefix[1])
	case len(object) > 0:
		p.exec(setObjectSQL, string(object), runID, lease)
	}
	for i, it := range output {
		p.exec(insertOutputSQL, it.ID, it.Output, msgs[i], runID, lease)
	}
}

// encodeMessages is the stored form of the items' messages.
func encodeMessages(items []runner.Item) ([]string, error) {
	msgs := make([]string, len(items))
	for i, it := range items {
		b, err := json.Marshal(it.Message)
		if err != nil {
			return nil, err
		}
		msgs[i] = string(b)
	}
	return msgs, nil
}

// GetResponse implements runner.HistoryStore.
func (s *Store) GetResponse(ctx context.Context, tenantID, runID string) (runner.ResponseRecord, error) {
	rec := runner.ResponseRecord{RunID: runID}
	var echo, object string
	err := s.pool.QueryRow(ctx, `SELECT tenant_id, previous_run_id, background, echo, object
		FROM responses WHERE run_id = $1 AND tenant_id = $2 AND NOT deleted`, runID, tenantID).
		Scan(&rec.TenantID, &rec.PreviousRunID, &rec.Background, &echo, &object)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return rec, notFound("response of run", runID)
	case err != nil:
		return rec, wrap("get response "+runID, err)
	}
	if echo != "" {
		rec.Echo = json.RawMessage(echo)
	}
	if object != "" {
		rec.Object = json.RawMessage(object)
	}
	if runner.NeedsText(rec.Object) {
		// The output item is removed with the object (DeleteResponse,
		// PurgeBefore); without it the host rebuilds the Response from
		// the echo, as for a run without an object.
		var msg string
		err := s.pool.QueryRow(ctx, outputTextSQL, runID).Scan(&msg)
		var m runner.Message
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			rec.Object = nil
		case err != nil:
			return rec, wrap("get response "+runID, err)
		default:
			if err := json.Unmarshal([]byte(msg), &m); err != nil {
				return rec, err
			}
			rec.Object = runner.ExpandObject(rec.Object, runID, m.Content, rec.Echo)
		}
	} else {
		rec.Object = runner.ExpandObject(rec.Object, runID, "", rec.Echo)
	}
	return rec, nil
}

// itemsSQL are a response's items, its own and those it shares with its
// bases, in position order (as the SQLite driver's).
const itemsSQL = `WITH RECURSIVE src(run_id, tenant_id, lim) AS (
		SELECT run_id, tenant_id, ` + noLimit + ` FROM responses WHERE run_id = $1 AND NOT forgotten
		UNION ALL
		SELECT r.base_run_id, s.tenant_id, LEAST(s.lim, r.base_count) FROM src s JOIN responses r ON r.run_id = s.run_id
		WHERE r.base_run_id <> ''
	)
	SELECT i.id, i.run_id, i.output, i.message, i.position FROM src s
	JOIN response_items i ON i.run_id = s.run_id AND i.tenant_id = s.tenant_id AND i.position < s.lim
	ORDER BY i.position`

// noLimit is the bound of a response's own positions.
const noLimit = "2147483647"

// ResponseItems implements runner.HistoryStore.
func (s *Store) ResponseItems(ctx context.Context, runID string) ([]runner.Item, error) {
	rows, err := s.pool.Query(ctx, itemsSQL, runID)
	if err != nil {
		return nil, wrap("items of "+runID, err)
	}
	return scanItems(rows, 0, runID)
}

// inflate puts the input back into a run's recorded request kept without
// it (itemref.Elide).
func (s *Store) inflate(ctx context.Context, r *runner.Run) error {
	if itemref.IsShared(r.Request) { // kept by reference (requests.go)
		req, err := resolveRequest(ctx, s.pool, r.ID)
		r.Request = req
		return err
	}
	if !itemref.IsElided(r.Request) {
		return nil
	}
	rows, err := s.pool.Query(ctx, itemsSQL, r.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var id, run, msg string
		var out bool
		var pos int
		if err := rows.Scan(&id, &run, &out, &msg, &pos); err != nil {
			return err
		}
		if !out || run != r.ID {
			msgs = append(msgs, msg)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	r.Request = itemref.Inflate(r.Request, msgs)
	return nil
}

// Conversation implements runner.HistoryStore: each turn's items with
// those it shares with its bases (itemsSQL).
func (s *Store) Conversation(ctx context.Context, tenantID, runID string, maxTurns, maxBytes int) ([]runner.Item, error) {
	rows, err := s.pool.Query(ctx, `WITH RECURSIVE chain(run_id, depth) AS (
			SELECT run_id, 0 FROM responses WHERE run_id = $1 AND tenant_id = $2 AND NOT deleted
			UNION ALL
			SELECT r.previous_run_id, c.depth + 1 FROM responses r JOIN chain c ON r.run_id = c.run_id
			WHERE r.previous_run_id != '' AND c.depth + 1 < $3
		),
		src(turn, depth, run_id, lim) AS (
			SELECT c.run_id, c.depth, c.run_id, `+noLimit+` FROM chain c
			JOIN responses r ON r.run_id = c.run_id AND NOT r.forgotten
			UNION ALL
			SELECT s.turn, s.depth, r.base_run_id, LEAST(s.lim, r.base_count) FROM src s JOIN responses r ON r.run_id = s.run_id
			WHERE r.base_run_id <> ''
		)
		SELECT i.id, i.run_id, i.output, i.message, i.position, s.turn FROM src s
		JOIN response_items i ON i.run_id = s.run_id AND i.tenant_id = $2 AND i.position < s.lim
		ORDER BY s.depth DESC, i.position`, runID, tenantID, maxTurns)
	if err != nil {
		return nil, wrap("conversation of "+runID, err)
	}
	return scanItems(rows, maxBytes, "")
}

// scanItems reads items until their stored messages pass maxBytes (0: no
// bound), then stops with runner.ErrHistoryTooLarge. The rows end with
// the item's position and, when of is "", the run whose item it is
// (otherwise of): an item read from a base is that run's input item,
// with the id its position gives it there (runner.InputItemID).
func scanItems(rows pgx.Rows, maxBytes int, of string) ([]runner.Item, error) {
	defer rows.Close()
	var items []runner.Item
	var budget runner.ByteBudget
	for rows.Next() {
		var it runner.Item
		var msg string
		var pos int
		owner := of
		dest := []any{&it.ID, &it.RunID, &it.Output, &msg, &pos}
		if of == "" {
			dest = append(dest, &owner)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, wrap("items", err)
		}
		if err := budget.Spend(len(msg), maxBytes); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(msg), &it.Message); err != nil {
			return nil, err
		}
		if it.RunID != owner {
			it.ID, it.RunID, it.Output = runner.InputItemID(owner, pos, it.Message.Role), owner, false
		}
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("items", err)
	}
	return items, nil
}

// GetItem implements runner.HistoryStore: a row of its own, or an input
// item a response shares with its base, whose id names the response and
// the position (runner.InputItemID).
func (s *Store) GetItem(ctx context.Context, tenantID, id string) (runner.Item, error) {
	rows, err := s.pool.Query(ctx, `SELECT i.id, i.run_id, i.output, i.message, i.position, i.run_id FROM response_items i
		JOIN responses r ON r.run_id = i.run_id AND NOT r.deleted AND NOT r.forgotten
		WHERE i.id = $1 AND i.tenant_id = $2`, id, tenantID)
	if err != nil {
		return runner.Item{}, wrap("get item "+id, err)
	}
	items, err := scanItems(rows, 0, "")
	if err == nil && len(items) == 0 {
		items, err = s.sharedItem(ctx, tenantID, id)
	}
	if err != nil {
		return runner.Item{}, err
	}
	if len(items) == 0 {
		return runner.Item{}, notFound("item", id)
	}
	return items[0], nil
}

// sharedItem finds an input item kept by reference, by the run its id
// names.
func (s *Store) sharedItem(ctx context.Context, tenantID, id string) ([]runner.Item, error) {
	runID, ok := itemref.InputRun(id)
	if !ok {
		return nil, nil
	}
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM responses WHERE run_id = $1 AND tenant_id = $2
		AND NOT deleted AND NOT forgotten`, runID, tenantID).Scan(&n); err != nil {
		return nil, wrap("get item "+id, err)
	}
	if n == 0 {
		return nil, nil
	}
	items, err := s.ResponseItems(ctx, runID)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		if it.ID == id && !it.Output {
			return []runner.Item{it}, nil
		}
	}
	return nil, nil
}

var _ runner.ResponseLinker = (*Store)(nil)

// ResponseLink implements runner.ResponseLinker: the response's row and
// its run's, by their primary keys, neither the final object nor the
// recorded request.
func (s *Store) ResponseLink(ctx context.Context, tenantID, runID string) (runner.ResponseLink, error) {
	var l runner.ResponseLink
	err := s.pool.QueryRow(ctx, `SELECT r.previous_run_id, u.session_id, u.thread_id
		FROM responses r JOIN runs u ON u.id = r.run_id AND u.tenant_id = r.tenant_id
		WHERE r.run_id = $1 AND r.tenant_id = $2 AND NOT r.deleted`, runID, tenantID).Scan(&l.PreviousRunID, &l.SessionID, &l.ThreadID)
	if errors.Is(err, pgx.ErrNoRows) {
		return l, notFound("response of run", runID)
	}
	if err != nil {
		return l, wrap("link of response "+runID, err)
	}
	return l, nil
}

// DeleteResponse implements runner.HistoryStore. What the response
// shares with responses based on it stays theirs (release).
func (s *Store) DeleteResponse(ctx context.Context, tenantID, runID string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		// The run's row first, then the response's (lockRequests).
		if err := lockRequests(ctx, tx, `SELECT $1::text`, runID); err != nil {
			return wrap("delete response "+runID, err)
		}
		if s.afterEmptyLocks != nil {
			s.afterEmptyLocks(tx)
		}
		tag, err := tx.Exec(ctx, `UPDATE responses SET deleted = TRUE, forgotten = TRUE, echo = '', object = '', prefix_hash = NULL, input_hash = NULL
			WHERE run_id = $1 AND tenant_id = $2 AND NOT deleted`, runID, tenantID)
		if err != nil {
			return wrap("delete response "+runID, err)
		}
		if tag.RowsAffected() == 0 {
			return notFound("response of run", runID)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM run_events WHERE run_id = $1`, runID); err != nil {
			return wrap("delete response "+runID, err)
		}
		if _, err := dropRequests(ctx, tx, `SELECT $1::text`, runID); err != nil {
			return wrap("delete response "+runID, err)
		}
		if err := release(ctx, tx, runID); err != nil {
			return wrap("delete response "+runID, err)
		}
		return nil
	})
}

// release removes the rows of forgotten response runID that no other
// response shares: all of them when none is based on it, and then its
// own reference to its base, which may free the base in turn; otherwise
// those past what its referrers share. Each
// response's row is locked (FOR UPDATE) before its referrers are
// counted, so a first write referencing it waits, or is counted.
func release(ctx context.Context, tx pgx.Tx, runID string) error {
	for runID != "" {
		var forgotten bool
		var base string
		err := tx.QueryRow(ctx, `SELECT forgotten, base_run_id FROM responses WHERE run_id = $1 FOR UPDATE`, runID).
			Scan(&forgotten, &base)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && !forgotten {
			return nil
		}
		if err != nil {
			return err
		}
		var refs, refMax int
		if err := tx.QueryRow(ctx, `SELECT count(*), COALESCE(max(base_count), 0) FROM responses
			WHERE base_run_id = $1 AND base_run_id <> ''`, runID).Scan(&refs, &refMax); err != nil {
			return err
		}
		if refs > 0 {
			_, err := tx.Exec(ctx, `DELETE FROM response_items WHERE run_id = $1 AND position >= $2`, runID, refMax)
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM response_items WHERE run_id = $1`, runID); err != nil {
			return err
		}
		if base == "" {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE responses SET base_run_id = '', base_count = 0 WHERE run_id = $1`, runID); err != nil {
			return err
		}
		runID = base
	}
	return nil
}

// AppendEvents implements runner.HistoryStore. A batch of a deleted
// response is not kept (runner.ErrNotFound), nor one whose lease token is
// no longer the run's (runner.ErrFenced): the INSERT is conditional on
// both, so no read comes first; only a refused batch reads which it was.
// A run that is no response (a native run) keeps its events too.
func (s *Store) AppendEvents(ctx context.Context, runID string, lease int64, batch []runner.StoredEvent) error {
	if len(batch) == 0 {
		return nil
	}
	tag, err := s.pool.Exec(ctx, appendEventsSQL,
		runID, batch[0].Seq, batch[len(batch)-1].Seq, runner.AppendEventFrames(nil, batch), lease)
	if err != nil {
		return wrap("events of "+runID, err)
	}
	if tag.RowsAffected() == 0 {
		return s.eventsRefused(ctx, runID, lease)
	}
	return nil
}

// appendEventsSQL keeps a batch unless its response was deleted or its
// lease token ($5, when not 0) is no longer the run's. The run's row is
// share-locked until the batch commits: a takeover (an UPDATE of the row)
// waits for a batch that found the token, and a batch that waited for a
// takeover re-reads the row and finds the token changed, so no batch of
// the old holder lands after the new holder counted the stored events.
const appendEventsSQL = `INSERT INTO run_events (run_id, first_seq, last_seq, frames)
	SELECT $1, $2, $3, $4 WHERE NOT EXISTS (SELECT 1 FROM responses WHERE run_id = $1 AND deleted)
	AND ($5::bigint = 0 OR EXISTS (SELECT 1 FROM runs WHERE id = $1 AND lease_token = $5 FOR SHARE))`

// eventsRefused explains why AppendEvents kept nothing: the run's lease
// token is no longer lease (runner.ErrFenced), or its response was
// deleted.
func (s *Store) eventsRefused(ctx context.Context, runID string, lease int64) error {
	if lease != 0 {
		var tok int64
		err := s.pool.QueryRow(ctx, `SELECT lease_token FROM runs WHERE id = $1`, runID).Scan(&tok)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return notFound("run", runID)
		case err != nil:
			return wrap("events of "+runID, err)
		case tok != lease:
			return fmt.Errorf("%w: run %s has lease token %d, the events hold %d", runner.ErrFenced, runID, tok, lease)
		}
	}
	return notFound("response of run", runID)
}

// Events implements runner.HistoryStore: the SQL LIMIT bounds what one
// call reads, whatever the stream's length.
func (s *Store) Events(ctx context.Context, runID string, after, batches int) ([]runner.StoredEvent, error) {
	rows, err := s.pool.Query(ctx, `SELECT first_seq, frames FROM run_events
		WHERE run_id = $1 AND last_seq > $2 ORDER BY first_seq LIMIT $3`, runID, after, max(batches, 1))
	if err != nil {
		return nil, wrap("events of "+runID, err)
	}
	defer rows.Close()
	var out []runner.StoredEvent
	for rows.Next() {
		var first int
		var frames []byte
		if err := rows.Scan(&first, &frames); err != nil {
			return nil, wrap("events of "+runID, err)
		}
		if out, err = runner.AppendEventsAfter(out, first, frames, after); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}
