package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/internal/groupcommit"
	"github.com/runedge/runedge/runner/store/internal/itemref"
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
	insertResponseSQL = `INSERT INTO responses (run_id, tenant_id, previous_run_id, background, echo, base_run_id, base_count,
		input_hash, input_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// windowHashes is itemref.Window rows of a hash, the parameters ?2
	// to ?33 (?1 is the tenant), for a lookup to seek each in an index.
	windowHashes = `WITH h(v) AS (VALUES (?2), (?3), (?4), (?5), (?6), (?7), (?8), (?9), (?10), (?11), (?12), (?13), (?14),
		(?15), (?16), (?17), (?18), (?19), (?20), (?21), (?22), (?23), (?24), (?25), (?26), (?27), (?28), (?29), (?30),
		(?31), (?32), (?33)) `
	// A base is the response of the tenant, not forgotten, whose items
	// begin with the longest of the input's prefixes (itemref.Window
	// hashes, NULL for those the input has not). Responses that share a
	// hash share its prefix, so one of them per hash is enough: the
	// lookup reads at most two rows per hash however many responses of
	// the tenant began alike (BenchmarkSamePrefix).
	findBaseSQL = windowHashes + `SELECT run_id, n FROM (
		SELECT r.run_id, r.prefix_count AS n FROM h JOIN responses r ON r.run_id = (
			SELECT q.run_id FROM responses q WHERE q.tenant_id = ?1 AND q.prefix_hash = h.v AND q.prefix_hash IS NOT NULL
			AND q.forgotten = 0 LIMIT 1)
		UNION ALL
		SELECT r.run_id, r.input_count FROM h JOIN responses r ON r.run_id = (
			SELECT q.run_id FROM responses q WHERE q.tenant_id = ?1 AND q.input_hash = h.v AND q.input_hash IS NOT NULL
			AND q.forgotten = 0 LIMIT 1)
		) ORDER BY n DESC LIMIT 1`
	useBaseSQL    = `UPDATE responses SET refs = refs + 1, ref_max = max(ref_max, ?) WHERE run_id = ?`
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
	// setEndSQL is setObjectSQL (the object "": kept as it is) that also
	// indexes the response's input and output together, the prefix a
	// resending client's next turn begins with (itemref).
	setEndSQL = `UPDATE responses SET object = CASE WHEN ? <> '' THEN ? ELSE object END, prefix_hash = ?, prefix_count = ?
		WHERE run_id = ? AND deleted = 0
		AND (? = 0 OR EXISTS (SELECT 1 FROM runs WHERE id = responses.run_id AND lease_token = ?))`
	insertOutputSQL = `INSERT INTO response_items (id, run_id, tenant_id, position, output, message)
		SELECT ?, r.run_id, r.tenant_id,
			COALESCE((SELECT MAX(position) + 1 FROM response_items WHERE run_id = r.run_id), r.base_count), ?, ?
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
	op, msgs, err := s.beginOp(ctx, rec, input)
	if err == nil {
		do := s.writer.Do
		if len(input) > groupedItems {
			do = s.ownTx
		}
		err = do(ctx, func(ctx context.Context, tx *wtx) error {
			if err := op(ctx, tx); err != nil {
				return err
			}
			// The run's recorded request is written already: it loses
			// its input here (itemref.Elide), if it holds exactly these.
			p := itemref.ElidedPrefix(msgs)
			n := utf8.RuneCountInString(p)
			// A large request is run_requests' (migration 14).
			res, err := tx.ExecContext(ctx, `UPDATE run_requests SET request = char(1) || substr(request, ? + 1)
				WHERE seq = (SELECT seq FROM runs WHERE id = ?) AND substr(request, 1, ?) = ?`, n, rec.RunID, n, p)
			if err != nil {
				return err
			}
			if done, err := res.RowsAffected(); err != nil || done > 0 {
				return err
			}
			_, err = tx.ExecContext(ctx, `UPDATE runs SET request = char(1) || substr(request, ? + 1)
				WHERE id = ? AND substr(request, 1, ?) = ?`, n, rec.RunID, n, p)
			return err
		})
	}
	if err != nil {
		s.pending.Drop(rec.RunID)
	}
	if err != nil {
		return fmt.Errorf("runner/store/sqlite: begin response %s: %w", rec.RunID, err)
	}
	return nil
}

// beginOp is BeginResponse's write. The messages are encoded and their
// prefixes hashed before it, outside the batch's transaction; the base is
// looked up inside it, so no delete comes between (one writer).
func (s *Store) beginOp(ctx context.Context, rec runner.ResponseRecord, input []runner.Item) (groupcommit.Op[*wtx], []string, error) {
	st := s.st
	msgs, err := encodeMessages(input)
	if err != nil {
		return nil, nil, err
	}
	hashes, lens, h := itemref.Prefixes(msgs)
	s.pending.Put(rec.RunID, rec.TenantID, h, itemref.Size(msgs), rec.Echo)
	share := itemref.Shareable(rec.RunID, input)
	var inHash any // the input's own hash, indexed when worth it
	inCount := 0
	if itemref.Worth(msgs) {
		inHash, inCount = hashes[0], len(msgs)
	} else {
		share = 0
	}
	return func(ctx context.Context, tx *wtx) error {
		base, from := "", 0
		if share > 0 {
			var err error
			if base, from, err = s.findBase(ctx, tx, rec.TenantID, hashes, lens); err != nil {
				return err
			}
			from = min(from, share)
		}
		if from == 0 {
			base = ""
		}
		if _, err := tx.StmtContext(ctx, st.insertResponse).ExecContext(ctx,
			rec.RunID, rec.TenantID, rec.PreviousRunID, rec.Background, string(rec.Echo), base, from, inHash, inCount); err != nil {
			return err
		}
		if base != "" {
			if _, err := tx.StmtContext(ctx, st.useBase).ExecContext(ctx, from, base); err != nil {
				return err
			}
		}
		ins := tx.StmtContext(ctx, st.insertItem)
		for i := from; i < len(input); i++ {
			it := input[i]
			if _, err := ins.ExecContext(ctx, it.ID, rec.RunID, rec.TenantID, i, it.Output, msgs[i]); err != nil {
				return fmt.Errorf("items: %w", err)
			}
		}
		return nil
	}, msgs, nil
}

// findBase returns the response whose first items are the longest of the
// input's hashed prefixes, and how many they are ("", 0: none).
func (s *Store) findBase(ctx context.Context, tx *wtx, tenantID string, hashes [][]byte, lens []int) (string, int, error) {
	args := make([]any, 1+itemref.Window)
	args[0] = tenantID
	for i, h := range hashes {
		args[1+i] = h
	}
	var base string
	var n int
	err := tx.StmtContext(ctx, s.st.findBase).QueryRowContext(ctx, args...).Scan(&base, &n)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, fmt.Errorf("items: base: %w", err)
	}
	if !slices.Contains(lens, n) {
		return "", 0, nil
	}
	return base, n, nil
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
	object = runner.CompactObject(object, runID, runner.OutputText(output), s.pending.Echo(runID))
	sum, _, n, indexed := s.pending.Sum(runID, msgs)
	return func(ctx context.Context, tx *wtx) error {
		s.pending.Drop(runID)
		switch {
		case indexed:
			if _, err := tx.StmtContext(ctx, st.setEnd).ExecContext(ctx, string(object), string(object), sum, n, runID, lease, lease); err != nil {
				return err
			}
		case len(object) > 0:
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
	op, msgs, err := s.beginOp(ctx, rec, input)
	if err != nil {
		return ctx, runner.NotJoined // BeginResponse will say why
	}
	// StartRun keeps the run's request without this input (itemref.Elide).
	ctx = itemref.WithElision(ctx, rec.RunID, msgs)
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
	// The terminal Transition keeps the run's output text by reference to
	// the output item when it is that item's (itemref.OutputElided).
	ctx = itemref.WithOutput(ctx, runID, output)
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
	if runner.NeedsText(rec.Object) {
		var msg string
		err := s.r.QueryRowContext(ctx, outputTextSQL, runID).Scan(&msg)
		rec.Object, err = expand(rec.Object, runID, rec.Echo, msg, err)
		if err != nil {
			return rec, fmt.Errorf("runner/store/sqlite: get response %s: %w", runID, err)
		}
	} else {
		rec.Object = runner.ExpandObject(rec.Object, runID, "", rec.Echo)
	}
	return rec, nil
}

var _ runner.ResponseLinker = (*Store)(nil)

// responseLinkSQL reads a response's link (runner.ResponseLinker): its
// row and its run's, by their primary keys, neither the final object nor
// the recorded request.
const responseLinkSQL = `SELECT r.previous_run_id, u.session_id, u.thread_id
	FROM responses r JOIN runs u ON u.id = r.run_id AND u.tenant_id = r.tenant_id
	WHERE r.run_id = ? AND r.tenant_id = ? AND r.deleted = 0`

// ResponseLink implements runner.ResponseLinker.
func (s *Store) ResponseLink(ctx context.Context, tenantID, runID string) (l runner.ResponseLink, err error) {
	defer outage(&err)
	err = s.st.responseLink.QueryRowContext(ctx, runID, tenantID).Scan(&l.PreviousRunID, &l.SessionID, &l.ThreadID)
	if errors.Is(err, sql.ErrNoRows) {
		return l, notFound("response of run", runID)
	}
	if err != nil {
		return l, fmt.Errorf("runner/store/sqlite: link of response %s: %w", runID, err)
	}
	return l, nil
}

// expand rebuilds a compact object from its output item's stored message
// (msg, read with err), its run's id and its response's echo. Without the item (it
// cannot be gone while the object is there: both are removed together)
// the object is dropped, and the host rebuilds the Response from the echo,
// as for a run without one.
func expand(object []byte, runID string, echo []byte, msg string, err error) ([]byte, error) {
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
	return runner.ExpandObject(object, runID, m.Content, echo), nil
}

// itemsSQL are a response's items, its own and those it shares with its
// bases (RATIONALE.md "Each item stored once"), in position order: each
// base gives the positions below the least base_count on the way to it.
// Every row is the response's tenant's. The items of a forgotten
// response (deleted, purged) are no longer its.
const itemsSQL = `WITH RECURSIVE src(run_id, tenant_id, lim) AS (
		SELECT run_id, tenant_id, ` + noLimit + ` FROM responses WHERE run_id = ? AND forgotten = 0
		UNION ALL
		SELECT r.base_run_id, s.tenant_id, min(s.lim, r.base_count) FROM src s JOIN responses r ON r.run_id = s.run_id
		WHERE r.base_run_id <> ''
	)
	SELECT i.id, i.run_id, i.output, i.message, i.position FROM src s
	JOIN response_items i ON i.run_id = s.run_id AND i.tenant_id = s.tenant_id AND i.position < s.lim
	ORDER BY i.position`

// noLimit is the bound of a response's own positions.
const noLimit = "4611686018427387904"

// ResponseItems implements runner.HistoryStore.
func (s *Store) ResponseItems(ctx context.Context, runID string) (_ []runner.Item, err error) {
	defer outage(&err)
	rows, err := s.st.responseItems.QueryContext(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("items: %w", err)
	}
	return scanItems(rows, 0, runID)
}

// inputMessages are the stored messages of run runID's input items.
func (s *Store) inputMessages(ctx context.Context, runID string) ([]string, error) {
	rows, err := s.st.responseItems.QueryContext(ctx, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var id, run, msg string
		var out bool
		var pos int
		if err := rows.Scan(&id, &run, &out, &msg, &pos); err != nil {
			return nil, err
		}
		if !out || run != runID {
			msgs = append(msgs, msg)
		}
	}
	return msgs, rows.Err()
}

// inflate puts the input back into a run's recorded request kept without
// it (itemref.Elide).
func (s *Store) inflate(ctx context.Context, r *runner.Run) error {
	if itemref.IsShared(r.Request) { // kept by reference (requests.go)
		req, err := resolveRequest(ctx, s.r, chainOfRunSQL, r.ID)
		r.Request = req
		return err
	}
	if !itemref.IsElided(r.Request) {
		return nil
	}
	msgs, err := s.inputMessages(ctx, r.ID)
	if err != nil {
		return err
	}
	r.Request = itemref.Inflate(r.Request, msgs)
	return nil
}

// Conversation implements runner.HistoryStore: one recursive query walks
// the previous_response_id chain back from runID and returns its items
// oldest turn first, each turn's with those it shares with its bases
// (itemsSQL); reading stops past maxBytes.
func (s *Store) Conversation(ctx context.Context, tenantID, runID string, maxTurns, maxBytes int) (_ []runner.Item, err error) {
	defer outage(&err)
	rows, err := s.r.QueryContext(ctx, `WITH RECURSIVE chain(run_id, depth) AS (
			SELECT run_id, 0 FROM responses WHERE run_id = ? AND tenant_id = ? AND deleted = 0
			UNION ALL
			SELECT r.previous_run_id, c.depth + 1 FROM responses r JOIN chain c ON r.run_id = c.run_id
			WHERE r.previous_run_id != '' AND c.depth + 1 < ?
		),
		src(turn, depth, run_id, lim) AS (
			SELECT c.run_id, c.depth, c.run_id, `+noLimit+` FROM chain c
			JOIN responses r ON r.run_id = c.run_id AND r.forgotten = 0
			UNION ALL
			SELECT s.turn, s.depth, r.base_run_id, min(s.lim, r.base_count) FROM src s JOIN responses r ON r.run_id = s.run_id
			WHERE r.base_run_id <> ''
		)
		SELECT i.id, i.run_id, i.output, i.message, i.position, s.turn FROM src s
		JOIN response_items i ON i.run_id = s.run_id AND i.tenant_id = ? AND i.position < s.lim
		ORDER BY s.depth DESC, i.position`, runID, tenantID, maxTurns, tenantID)
	if err != nil {
		return nil, fmt.Errorf("runner/store/sqlite: conversation of %s: %w", runID, err)
	}
	return scanItems(rows, maxBytes, "")
}

// scanItems reads items until their stored messages pass maxBytes (0: no
// bound), then stops with runner.ErrHistoryTooLarge. The rows end with
// the item's position and, when of is "", the run whose item it is
// (otherwise of): an item read from a base is that run's input item,
// with the id its position gives it there (runner.InputItemID).
func scanItems(rows *sql.Rows, maxBytes int, of string) ([]runner.Item, error) {
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
			return nil, fmt.Errorf("runner/store/sqlite: items: %w", err)
		}
		if err := budget.Spend(len(msg), maxBytes); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(msg), &it.Message); err != nil {
			return nil, fmt.Errorf("runner/store/sqlite: item %s: %w", it.ID, err)
		}
		if it.RunID != owner {
			it.ID, it.RunID, it.Output = runner.InputItemID(owner, pos, it.Message.Role), owner, false
		}
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("runner/store/sqlite: items: %w", err)
	}
	return items, nil
}

// GetItem implements runner.HistoryStore: a row of its own, or an input
// item a response shares with its base, whose id names the response and
// the position (runner.InputItemID).
func (s *Store) GetItem(ctx context.Context, tenantID, id string) (_ runner.Item, err error) {
	defer outage(&err)
	rows, err := s.r.QueryContext(ctx, `SELECT i.id, i.run_id, i.output, i.message, i.position, i.run_id FROM response_items i
		JOIN responses r ON r.run_id = i.run_id AND r.deleted = 0 AND r.forgotten = 0
		WHERE i.id = ? AND i.tenant_id = ?`, id, tenantID)
	if err != nil {
		return runner.Item{}, fmt.Errorf("runner/store/sqlite: get item %s: %w", id, err)
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

// sharedItem finds an input item kept by reference, by the run and
// position its id names.
func (s *Store) sharedItem(ctx context.Context, tenantID, id string) ([]runner.Item, error) {
	runID, ok := itemref.InputRun(id)
	if !ok {
		return nil, nil
	}
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM responses WHERE run_id = ? AND tenant_id = ?
		AND deleted = 0 AND forgotten = 0`, runID, tenantID).Scan(&n); err != nil || n == 0 {
		return nil, err
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

// DeleteResponse implements runner.HistoryStore. What the response
// shares with responses based on it stays theirs (forget).
func (s *Store) DeleteResponse(ctx context.Context, tenantID, runID string) (err error) {
	defer outage(&err)
	err = s.ownTx(ctx, func(ctx context.Context, tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE responses SET deleted = 1, forgotten = 1, echo = '', object = '', prefix_hash = NULL, input_hash = NULL
		WHERE run_id = ? AND tenant_id = ? AND deleted = 0`, runID, tenantID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("response of run", runID)
		}
		if err := dropRequests(ctx, tx, `SELECT seq FROM runs WHERE id = ?`, runID); err != nil {
			return err
		}
		for _, q := range []string{`DELETE FROM run_events WHERE run_id = ?`,
			`UPDATE runs SET request = NULL, output = '', output_ref = 0 WHERE id = ?`} {
			if _, err := tx.ExecContext(ctx, q, runID); err != nil {
				return err
			}
		}
		return release(ctx, tx, runID)
	})
	if err != nil && !errors.Is(err, runner.ErrNotFound) {
		return fmt.Errorf("runner/store/sqlite: delete response %s: %w", runID, err)
	}
	return err
}

// release removes the rows of forgotten response runID that no other
// response shares: all of them when none is based on it, and then its
// own reference to its base, which may free the base in turn; otherwise
// those past what its referrers share (ref_max).
func release(ctx context.Context, tx *wtx, runID string) error {
	for runID != "" {
		var refs, refMax int
		var forgotten bool
		var base string
		err := tx.QueryRowContext(ctx, `SELECT refs, ref_max, forgotten, base_run_id FROM responses WHERE run_id = ?`, runID).
			Scan(&refs, &refMax, &forgotten, &base)
		if errors.Is(err, sql.ErrNoRows) || err == nil && !forgotten {
			return nil
		}
		if err != nil {
			return err
		}
		if refs > 0 {
			_, err := tx.ExecContext(ctx, `DELETE FROM response_items WHERE run_id = ? AND position >= ?`, runID, refMax)
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM response_items WHERE run_id = ?`, runID); err != nil {
			return err
		}
		if base == "" {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE responses SET base_run_id = '', base_count = 0 WHERE run_id = ?`, runID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE responses SET refs = refs - 1 WHERE run_id = ?`, base); err != nil {
			return err
		}
		runID = base
	}
	return nil
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
