package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/runedge/runedge/runner"
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
	insertResponseSQL = `INSERT INTO responses (run_id, tenant_id, previous_run_id, background, echo)
		VALUES ($1, $2, $3, $4, $5)`
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
			COALESCE((SELECT MAX(position) + 1 FROM response_items WHERE run_id = r.run_id), 0), $2, $3
		FROM responses r WHERE r.run_id = $4 AND NOT r.deleted
		AND ($5::bigint = 0 OR EXISTS (SELECT 1 FROM runs WHERE id = $4 AND lease_token = $5))`
	outputTextSQL = `SELECT message FROM response_items WHERE run_id = $1 AND output ORDER BY position LIMIT 1`
)

// BeginResponse implements runner.HistoryStore.
func (s *Store) BeginResponse(ctx context.Context, rec runner.ResponseRecord, input []runner.Item) error {
	msgs, err := encodeMessages(input)
	if err != nil {
		return wrap("begin response "+rec.RunID, err)
	}
	if len(input) > groupedItems {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			p := &pipe{}
			beginResponse(p, rec, input, msgs)
			if err := tx.SendBatch(ctx, &p.b).Close(); err != nil {
				return wrap("begin response "+rec.RunID, err)
			}
			return nil
		})
	}
	err = s.writer.Do(ctx, func(_ context.Context, p *pipe) error {
		beginResponse(p, rec, input, msgs)
		return nil
	})
	if err != nil {
		return wrap("begin response "+rec.RunID, err)
	}
	return nil
}

func beginResponse(p *pipe, rec runner.ResponseRecord, input []runner.Item, msgs []string) {
	p.exec(insertResponseSQL, rec.RunID, rec.TenantID, rec.PreviousRunID, rec.Background, string(rec.Echo))
	for i, it := range input {
		p.exec(insertItemSQL, it.ID, rec.RunID, rec.TenantID, i, it.Output, msgs[i])
	}
}

// EndResponse implements runner.HistoryStore. The object is kept compact
// (runner.CompactObject).
func (s *Store) EndResponse(ctx context.Context, runID string, object []byte, output []runner.Item) error {
	msgs, err := encodeMessages(output)
	if err != nil {
		return wrap("end response "+runID, err)
	}
	object = runner.CompactObject(object, runner.OutputText(output))
	err = s.writer.Do(ctx, func(_ context.Context, p *pipe) error {
		endResponse(p, runID, 0, object, output, msgs)
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
// input too large for a shared batch (groupedItems).
func (s *Store) JoinBegin(ctx context.Context, rec runner.ResponseRecord, input []runner.Item) (context.Context, func() bool) {
	msgs, err := encodeMessages(input)
	if err != nil || len(input) > groupedItems {
		return ctx, runner.NotJoined // BeginResponse will say why, or write alone
	}
	ctx, r := s.writer.WithRider(ctx, func(_ context.Context, p *pipe) error {
		beginResponse(p, rec, input, msgs)
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
	object = runner.CompactObject(object, runner.OutputText(output))
	ctx, r := s.writer.WithRider(ctx, func(_ context.Context, p *pipe) error {
		endResponse(p, runID, lease, object, output, msgs)
		return nil
	})
	return ctx, r.Committed
}

func endResponse(p *pipe, runID string, lease int64, object []byte, output []runner.Item, msgs []string) {
	if len(object) > 0 {
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
	if runner.IsCompact(rec.Object) {
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
			rec.Object = runner.ExpandObject(rec.Object, m.Content)
		}
	}
	return rec, nil
}

// ResponseItems implements runner.HistoryStore.
func (s *Store) ResponseItems(ctx context.Context, runID string) ([]runner.Item, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, run_id, output, message FROM response_items
		WHERE run_id = $1 ORDER BY position`, runID)
	if err != nil {
		return nil, wrap("items of "+runID, err)
	}
	return scanItems(rows, 0)
}

// Conversation implements runner.HistoryStore.
func (s *Store) Conversation(ctx context.Context, tenantID, runID string, maxTurns, maxBytes int) ([]runner.Item, error) {
	rows, err := s.pool.Query(ctx, `WITH RECURSIVE chain(run_id, depth) AS (
			SELECT run_id, 0 FROM responses WHERE run_id = $1 AND tenant_id = $2 AND NOT deleted
			UNION ALL
			SELECT r.previous_run_id, c.depth + 1 FROM responses r JOIN chain c ON r.run_id = c.run_id
			WHERE r.previous_run_id != '' AND c.depth + 1 < $3
		)
		SELECT i.id, i.run_id, i.output, i.message FROM chain c
		JOIN response_items i ON i.run_id = c.run_id AND i.tenant_id = $2
		ORDER BY c.depth DESC, i.position`, runID, tenantID, maxTurns)
	if err != nil {
		return nil, wrap("conversation of "+runID, err)
	}
	return scanItems(rows, maxBytes)
}

// scanItems reads items until their stored messages pass maxBytes (0: no
// bound), then stops with runner.ErrHistoryTooLarge.
func scanItems(rows pgx.Rows, maxBytes int) ([]runner.Item, error) {
	defer rows.Close()
	var items []runner.Item
	var budget runner.ByteBudget
	for rows.Next() {
		var it runner.Item
		var msg string
		if err := rows.Scan(&it.ID, &it.RunID, &it.Output, &msg); err != nil {
			return nil, wrap("items", err)
		}
		if err := budget.Spend(len(msg), maxBytes); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(msg), &it.Message); err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("items", err)
	}
	return items, nil
}

// GetItem implements runner.HistoryStore.
func (s *Store) GetItem(ctx context.Context, tenantID, id string) (runner.Item, error) {
	rows, err := s.pool.Query(ctx, `SELECT i.id, i.run_id, i.output, i.message FROM response_items i
		JOIN responses r ON r.run_id = i.run_id AND NOT r.deleted
		WHERE i.id = $1 AND i.tenant_id = $2`, id, tenantID)
	if err != nil {
		return runner.Item{}, wrap("get item "+id, err)
	}
	items, err := scanItems(rows, 0)
	if err != nil {
		return runner.Item{}, err
	}
	if len(items) == 0 {
		return runner.Item{}, notFound("item", id)
	}
	return items[0], nil
}

// DeleteResponse implements runner.HistoryStore.
func (s *Store) DeleteResponse(ctx context.Context, tenantID, runID string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE responses SET deleted = TRUE, echo = '', object = ''
			WHERE run_id = $1 AND tenant_id = $2 AND NOT deleted`, runID, tenantID)
		if err != nil {
			return wrap("delete response "+runID, err)
		}
		if tag.RowsAffected() == 0 {
			return notFound("response of run", runID)
		}
		for _, q := range []string{`DELETE FROM response_items WHERE run_id = $1`, `DELETE FROM run_events WHERE run_id = $1`,
			`UPDATE runs SET request = NULL, output = '' WHERE id = $1`} {
			if _, err := tx.Exec(ctx, q, runID); err != nil {
				return wrap("delete response "+runID, err)
			}
		}
		return nil
	})
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
