package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/internal/groupcommit"
)

var _ runner.HistoryStore = (*Store)(nil)

// groupedItems is the most input items a stored response's first write
// may carry through the group-commit writer. A request with more (a 1 MiB
// body can hold tens of thousands of messages) writes them in a transaction
// of its own: inside a shared batch it would hold every other run's commit
// behind it, and could outlast the batch's time bound.
const groupedItems = 256

// The response history's writes on the request path, prepared at Open
// with the run statements (stmts.go).
const (
	insertResponseSQL = `INSERT INTO responses (run_id, tenant_id, previous_run_id, background, echo)
		VALUES (?, ?, ?, ?, ?)`
	insertItemSQL = `INSERT INTO response_items (id, run_id, tenant_id, position, output, message)
		VALUES (?, ?, ?, ?, ?, ?)`
	// The final object and the output items are written without reading
	// first: a response deleted while it ran matches no row, so nothing
	// is kept of it, and an output item takes its tenant and position
	// (after the items already there) from the database. A joined end
	// is fenced as its Transition is (the last two parameters: the lease
	// token, 0 for none, twice): it rides on that write whether or not
	// the write changed a row.
	setObjectSQL = `UPDATE responses SET object = ? WHERE run_id = ? AND deleted = 0
		AND (? = 0 OR EXISTS (SELECT 1 FROM runs WHERE id = responses.run_id AND lease_token = ?))`
	insertOutputSQL = `INSERT INTO response_items (id, run_id, tenant_id, position, output, message)
		SELECT ?, r.run_id, r.tenant_id,
			COALESCE((SELECT MAX(position) + 1 FROM response_items WHERE run_id = r.run_id), 0), ?, ?
		FROM responses r WHERE r.run_id = ? AND r.deleted = 0
		AND (? = 0 OR EXISTS (SELECT 1 FROM runs WHERE id = r.run_id AND lease_token = ?))`
	outputTextSQL = `SELECT message FROM response_items WHERE run_id = ? AND output = 1 ORDER BY position LIMIT 1`
)

// BeginResponse implements runner.HistoryStore. Like the run writes, it
// goes through the group-commit writer (up to groupedItems input items):
// under concurrent requests it shares their transaction instead of taking
// the single write connection for a commit of its own.
func (s *Store) BeginResponse(ctx context.Context, rec runner.ResponseRecord, input []runner.Item) (err error) {
	defer outage(&err)
	op, err := s.beginOp(ctx, rec, input)
	if err == nil {
		do := s.writer.Do
		if len(input) > groupedItems {
			do = s.ownTx
		}
		err = do(ctx, op)
	}
	if err != nil {
		return fmt.Errorf("runner/store/sqlite: begin response %s: %w", rec.RunID, err)
	}
	return nil
}

// beginOp is BeginResponse's write. The messages are encoded before it,
// outside the batch's transaction.
func (s *Store) beginOp(ctx context.Context, rec runner.ResponseRecord, input []runner.Item) (groupcommit.Op[*wtx], error) {
	st := s.st
	msgs, err := encodeMessages(input)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, tx *wtx) error {
		if _, err := tx.StmtContext(ctx, st.insertResponse).ExecContext(ctx,
			rec.RunID, rec.TenantID, rec.PreviousRunID, rec.Background, string(rec.Echo)); err != nil {
			return err
		}
		if len(input) == 0 {
			return nil
		}
		ins := tx.StmtContext(ctx, st.insertItem)
		for i, it := range input {
			if _, err := ins.ExecContext(ctx, it.ID, rec.RunID, rec.TenantID, i, it.Output, msgs[i]); err != nil {
				return fmt.Errorf("items: %w", err)
			}
		}
		return nil
	}, nil
}

// EndResponse implements runner.HistoryStore. Output items follow the
// input items in position order. The object is kept compact
// (runner.CompactObject): its output text is in the output item already.
func (s *Store) EndResponse(ctx context.Context, runID string, object []byte, output []runner.Item) (err error) {
	defer outage(&err)
	op, err := s.endOp(ctx, runID, 0, object, output)
	if err == nil {
		err = s.writer.Do(ctx, op)
	}
	if err != nil {
		return fmt.Errorf("runner/store/sqlite: end response %s: %w", runID, err)
	}
	return nil
}

func (s *Store) endOp(ctx context.Context, runID string, lease int64, object []byte, output []runner.Item) (groupcommit.Op[*wtx], error) {
	st := s.st
	msgs, err := encodeMessages(output)
	if err != nil {
		return nil, err
	}
	object = runner.CompactObject(object, runner.OutputText(output))
	return func(ctx context.Context, tx *wtx) error {
		if len(object) > 0 {
			if _, err := tx.StmtContext(ctx, st.setObject).ExecContext(ctx, string(object), runID, lease, lease); err != nil {
				return err
			}
		}
		if len(output) == 0 {
			return nil
		}
		ins := tx.StmtContext(ctx, st.insertOutput)
		for i, it := range output {
			if _, err := ins.ExecContext(ctx, it.ID, it.Output, msgs[i], runID, lease, lease); err != nil {
				return fmt.Errorf("items: %w", err)
			}
		}
		return nil
	}, nil
}

var _ runner.HistoryJoiner = (*Store)(nil)

// JoinBegin implements runner.HistoryJoiner: BeginResponse's write rides
// on the run's StartRun (one commit instead of two), except for an input
// too large for a shared batch (groupedItems).
func (s *Store) JoinBegin(ctx context.Context, rec runner.ResponseRecord, input []runner.Item) (context.Context, func() bool) {
	if len(input) > groupedItems {
		return ctx, runner.NotJoined
	}
	op, err := s.beginOp(ctx, rec, input)
	if err != nil {
		return ctx, runner.NotJoined // BeginResponse will say why
	}
	ctx, r := s.writer.WithRider(ctx, op)
	return ctx, r.Committed
}

// JoinEnd implements runner.HistoryJoiner: EndResponse's write rides on
// the run's terminal Transition, fenced by the same lease token.
func (s *Store) JoinEnd(ctx context.Context, runID string, lease int64, object []byte, output []runner.Item) (context.Context, func() bool) {
	op, err := s.endOp(ctx, runID, lease, object, output)
	if err != nil {
		return ctx, runner.NotJoined
	}
	ctx, r := s.writer.WithRider(ctx, op)
	return ctx, r.Committed
}

// encodeMessages is the stored form of the items' messages.
func encodeMessages(items []runner.Item) ([]string, error) {
	msgs := make([]string, len(items))
	for i, it := range items {
		b, err := json.Marshal(it.Message)
		if err != nil {
			return nil, fmt.Errorf("items: %w", err)
		}
		msgs[i] = string(b)
	}
	return msgs, nil
}

// GetResponse implements runner.HistoryStore.
func (s *Store) GetResponse(ctx context.Context, tenantID, runID string) (_ runner.ResponseRecord, err error) {
	defer outage(&err)
	rec := runner.ResponseRecord{RunID: runID}
	var echo, object string
	err = s.r.QueryRowContext(ctx, `SELECT tenant_id, previous_run_id, background, echo, object
		FROM responses WHERE run_id = ? AND tenant_id = ? AND deleted = 0`, runID, tenantID).
		Scan(&rec.TenantID, &rec.PreviousRunID, &rec.Background, &echo, &object)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return rec, notFound("response of run", runID)
	case err != nil:
		return rec, fmt.Errorf("runner/store/sqlite: get response %s: %w", runID, err)
	}
	if echo != "" {
		rec.Echo = json.RawMessage(echo)
	}
	if object != "" {
		rec.Object = json.RawMessage(object)
	}
	if runner.IsCompact(rec.Object) {
		var msg string
		err := s.r.QueryRowContext(ctx, outputTextSQL, runID).Scan(&msg)
		rec.Object, err = expand(rec.Object, msg, err)
		if err != nil {
			return rec, fmt.Errorf("runner/store/sqlite: get response %s: %w", runID, err)
		}
	}
	return rec, nil
}

// expand rebuilds a compact object from its output item's stored message
// (msg, read with err). Without the item (it cannot be gone while the
// object is there: both are removed together) the object is dropped, and
// the host rebuilds the Response from the echo, as for a run without one.
func expand(object []byte, msg string, err error) ([]byte, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m runner.Message
	if err := json.Unmarshal([]byte(msg), &m); err != nil {
		return nil, err
	}
	return runner.ExpandObject(object, m.Content), nil
}

// ResponseItems implements runner.HistoryStore.
func (s *Store) ResponseItems(ctx context.Context, runID string) (_ []runner.Item, err error) {
	defer outage(&err)
	rows, err := s.r.QueryContext(ctx, `SELECT id, run_id, output, message FROM response_items
		WHERE run_id = ? ORDER BY position`, runID)
	if err != nil {
		return nil, fmt.Errorf("items: %w", err)
	}
	return scanItems(rows, 0)
}

// Conversation implements runner.HistoryStore: one recursive query walks
// the previous_response_id chain back from runID and returns its items
// oldest turn first; reading stops past maxBytes.
func (s *Store) Conversation(ctx context.Context, tenantID, runID string, maxTurns, maxBytes int) (_ []runner.Item, err error) {
	defer outage(&err)
	rows, err := s.r.QueryContext(ctx, `WITH RECURSIVE chain(run_id, depth) AS (
			SELECT run_id, 0 FROM responses WHERE run_id = ? AND tenant_id = ? AND deleted = 0
			UNION ALL
			SELECT r.previous_run_id, c.depth + 1 FROM responses r JOIN chain c ON r.run_id = c.run_id
			WHERE r.previous_run_id != '' AND c.depth + 1 < ?
		)
		SELECT i.id, i.run_id, i.output, i.message FROM chain c
		JOIN response_items i ON i.run_id = c.run_id AND i.tenant_id = ?
		ORDER BY c.depth DESC, i.position`, runID, tenantID, maxTurns, tenantID)
	if err != nil {
		return nil, fmt.Errorf("runner/store/sqlite: conversation of %s: %w", runID, err)
	}
	return scanItems(rows, maxBytes)
}

// scanItems reads items until their stored messages pass maxBytes (0: no
// bound), then stops with runner.ErrHistoryTooLarge.
func scanItems(rows *sql.Rows, maxBytes int) ([]runner.Item, error) {
	defer rows.Close()
	var items []runner.Item
	var budget runner.ByteBudget
	for rows.Next() {
		var it runner.Item
		var msg string
		if err := rows.Scan(&it.ID, &it.RunID, &it.Output, &msg); err != nil {
			return nil, fmt.Errorf("runner/store/sqlite: items: %w", err)
		}
		if err := budget.Spend(len(msg), maxBytes); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(msg), &it.Message); err != nil {
			return nil, fmt.Errorf("runner/store/sqlite: item %s: %w", it.ID, err)
		}
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("runner/store/sqlite: items: %w", err)
	}
	return items, nil
}

// GetItem implements runner.HistoryStore.
func (s *Store) GetItem(ctx context.Context, tenantID, id string) (_ runner.Item, err error) {
	defer outage(&err)
	rows, err := s.r.QueryContext(ctx, `SELECT i.id, i.run_id, i.output, i.message FROM response_items i
		JOIN responses r ON r.run_id = i.run_id AND r.deleted = 0
		WHERE i.id = ? AND i.tenant_id = ?`, id, tenantID)
	if err != nil {
		return runner.Item{}, fmt.Errorf("runner/store/sqlite: get item %s: %w", id, err)
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
func (s *Store) DeleteResponse(ctx context.Context, tenantID, runID string) (err error) {
	defer outage(&err)
	err = s.ownTx(ctx, func(ctx context.Context, tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE responses SET deleted = 1, echo = '', object = ''
		WHERE run_id = ? AND tenant_id = ? AND deleted = 0`, runID, tenantID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("response of run", runID)
		}
		for _, q := range []string{`DELETE FROM response_items WHERE run_id = ?`, `DELETE FROM run_events WHERE run_id = ?`,
			`UPDATE runs SET request = NULL, output = '' WHERE id = ?`} {
			if _, err := tx.ExecContext(ctx, q, runID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, runner.ErrNotFound) {
		return fmt.Errorf("runner/store/sqlite: delete response %s: %w", runID, err)
	}
	return err
}

// AppendEvents implements runner.HistoryStore: the batch is one row
// (runner.AppendEventFrames), written through the group-commit writer so
// that concurrent streams' batches share commits. A batch of a deleted
// response is not kept (runner.ErrNotFound), nor one whose lease token is
// no longer the run's (runner.ErrFenced): the INSERT is conditional on
// both, so no read comes first; only a refused batch reads which it was.
// A run that is no response (a native run) keeps its events too.
func (s *Store) AppendEvents(ctx context.Context, runID string, lease int64, batch []runner.StoredEvent) (err error) {
	defer outage(&err)
	if len(batch) == 0 {
		return nil
	}
	frames := runner.AppendEventFrames(nil, batch)
	kept := true
	if err := s.writer.Do(ctx, func(ctx context.Context, tx *wtx) error {
		res, err := tx.ExecContext(ctx, appendEventsSQL,
			runID, batch[0].Seq, batch[len(batch)-1].Seq, frames, runID, lease, runID, lease)
		if err == nil {
			n, _ := res.RowsAffected()
			kept = n > 0
		}
		return err
	}); err != nil {
		return fmt.Errorf("runner/store/sqlite: events of %s: %w", runID, err)
	}
	if !kept {
		return s.eventsRefused(ctx, runID, lease)
	}
	return nil
}

// appendEventsSQL keeps a batch unless its response was deleted or its
// lease token (when not 0) is no longer the run's.
const appendEventsSQL = `INSERT INTO run_events (run_id, first_seq, last_seq, frames)
	SELECT ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM responses WHERE run_id = ? AND deleted <> 0)
	AND (? = 0 OR EXISTS (SELECT 1 FROM runs WHERE id = ? AND lease_token = ?))`

// eventsRefused explains why AppendEvents kept nothing: the run's lease
// token is no longer lease (runner.ErrFenced), or its response was
// deleted.
func (s *Store) eventsRefused(ctx context.Context, runID string, lease int64) error {
	if lease != 0 {
		var tok int64
		err := s.r.QueryRowContext(ctx, `SELECT lease_token FROM runs WHERE id = ?`, runID).Scan(&tok)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return notFound("run", runID)
		case err != nil:
			return fmt.Errorf("runner/store/sqlite: events of %s: %w", runID, err)
		case tok != lease:
			return fmt.Errorf("%w: run %s has lease token %d, the events hold %d", runner.ErrFenced, runID, tok, lease)
		}
	}
	return notFound("response of run", runID)
}

// Events implements runner.HistoryStore: the SQL LIMIT bounds what one
// call reads, whatever the stream's length.
func (s *Store) Events(ctx context.Context, runID string, after, batches int) (_ []runner.StoredEvent, err error) {
	defer outage(&err)
	rows, err := s.r.QueryContext(ctx, `SELECT first_seq, frames FROM run_events
		WHERE run_id = ? AND last_seq > ? ORDER BY first_seq LIMIT ?`, runID, after, max(batches, 1))
	if err != nil {
		return nil, fmt.Errorf("runner/store/sqlite: events of %s: %w", runID, err)
	}
	defer rows.Close()
	var out []runner.StoredEvent
	for rows.Next() {
		var first int
		var frames []byte
		if err := rows.Scan(&first, &frames); err != nil {
			return nil, fmt.Errorf("runner/store/sqlite: events of %s: %w", runID, err)
		}
		if out, err = runner.AppendEventsAfter(out, first, frames, after); err != nil {
			return nil, fmt.Errorf("runner/store/sqlite: events of %s: %w", runID, err)
		}
	}
	return out, rows.Err()
}
