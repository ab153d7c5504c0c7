package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/internal/cputime"
	"github.com/runedge/runedge/runner/store/postgres/pgtest"
)

// BenchmarkResentSession is a client that keeps its own history (the
// Agents SDK's sessions, LangChain, the AI SDK): each of resentTurns turns
// of a session resends everything said so far, the previous answers as
// the Responses API returned them, and one new user message of about 560
// bytes, with store at its default (true). Through the real edge and
// store: SQLite's file, and PostgreSQL when RUNEDGE_TEST_PG_DSN is set.
// store/distinct is how much the store grew over the distinct bytes the
// client sent (each input item once); sent/distinct is what it sent in
// all over the same; cpu-ns/turn the process's CPU per turn (server and
// client, the size queries included). Each iteration is one whole
// session.
func BenchmarkResentSession(b *testing.B) {
	onStores(b, func(b *testing.B, h *harness, size func() int64) { benchResent(b, h, size, resentSession) })
}

// onStores runs bench on SQLite's file and on PostgreSQL (when
// RUNEDGE_TEST_PG_DSN is set), each through the real edge, with size
// measuring the store as it grows.
func onStores(b *testing.B, bench func(b *testing.B, h *harness, size func() int64)) {
	b.Run("sqlite", func(b *testing.B) {
		h := start(b, nil)
		db, err := sql.Open("sqlite", "file:"+h.cfg.Path(h.cfg.Store.Path)+"?mode=ro")
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		bench(b, h, func() int64 {
			// The database's pages in use, WAL included (a reader's
			// view): what the file is once checkpointed.
			var n int64
			if err := db.QueryRow(`SELECT (page_count - freelist_count) * page_size
				FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()`).Scan(&n); err != nil {
				b.Fatal(err)
			}
			return n
		})
	})
	b.Run("postgres", func(b *testing.B) {
		dsn := pgtest.Schema(b)
		h := start(b, func(c *config.Config) { c.Store.Driver, c.Store.DSN = "postgres", dsn })
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close(context.Background())
		bench(b, h, func() int64 {
			// Every table of the schema with its indexes and TOAST,
			// after a plain VACUUM, as autovacuum keeps a live store:
			// the row versions that every run's updates leave (its end,
			// its response's final object) are space to reuse, not
			// growth.
			if _, err := conn.Exec(context.Background(), `VACUUM`); err != nil {
				b.Fatal(err)
			}
			var n int64
			if err := conn.QueryRow(context.Background(), `SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0)::bigint
				FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
				WHERE n.nspname = current_schema() AND c.relkind = 'r'`).Scan(&n); err != nil {
				b.Fatal(err)
			}
			return n
		})
	})
}

// resentTurns is a session's length.
const resentTurns = 40

// benchResent plays sessions (play: one of them) and reports their
// metrics: the first, not counted; then one per iteration.
func benchResent(b *testing.B, h *harness, size func() int64, play func(client *http.Client, base string, session int) (distinct, sent int64, err error)) {
	client := &http.Client{}
	defer client.CloseIdleConnections()
	// One session first, not counted: a store in use is not empty, and
	// an empty one's first rows pay each table's and index's first pages.
	var grown, distinct, sent int64
	session := 0
	if _, _, err := play(client, h.URL, session); err != nil {
		b.Fatal(err)
	}
	cpu0 := cputime.Process()
	for b.Loop() {
		session++
		before := size()
		d, n, err := play(client, h.URL, session)
		if err != nil {
			b.Fatal(err)
		}
		distinct += d
		sent += n
		grown += size() - before
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N*resentTurns), "cpu-ns/turn")
	b.ReportMetric(float64(grown)/float64(distinct), "store/distinct")
	b.ReportMetric(float64(sent)/float64(distinct), "sent/distinct")
}

// resentSession plays one session of resentTurns turns and returns the
// distinct bytes it sent (each input item once) and all it sent.
func resentSession(client *http.Client, base string, session int) (distinct, sent int64, err error) {
	var history []json.RawMessage
	for turn := range resentTurns {
		user, err := json.Marshal(map[string]string{"role": "user", "content": fmt.Sprintf("session %d turn %d: %s",
			session, turn, strings.Repeat("the quick brown fox jumps over the lazy dog; ", 12))})
		if err != nil {
			return 0, 0, err
		}
		history = append(history, user)
		body, err := json.Marshal(map[string]any{"model": "service", "input": history})
		if err != nil {
			return 0, 0, err
		}
		sent += int64(len(body))
		distinct += int64(len(user))
		out, err := resentTurn(client, base, body)
		if err != nil {
			return 0, 0, err
		}
		for _, it := range out {
			distinct += int64(len(it))
		}
		history = append(history, out...)
	}
	return distinct, sent, nil
}

// resentTurn posts one turn and returns the response's output items, as
// a client puts them back into its history.
func resentTurn(client *http.Client, base string, body []byte) ([]json.RawMessage, error) {
	reply, err := historyPost(client, base+"/v1/responses", string(body))
	if err != nil {
		return nil, err
	}
	var r struct {
		Output []json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(reply, &r); err != nil {
		return nil, err
	}
	return r.Output, nil
}
