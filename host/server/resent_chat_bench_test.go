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

// BenchmarkResentChat is BenchmarkResentSession's client as a chat
// completion: each of resentTurns turns resends every message so far, the
// answers as the assistant's messages, and one new user message of about
// 560 bytes. Chat keeps no response items: what the store grows by is the
// run and its recorded request, which a turn of runner.SharedRequestMin
// bytes or more keeps by reference to the turn before (RATIONALE.md
// "Agent-sized bodies"). The metrics are BenchmarkResentSession's.
func BenchmarkResentChat(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		h := start(b, nil)
		db, err := sql.Open("sqlite", "file:"+h.cfg.Path(h.cfg.Store.Path)+"?mode=ro")
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		benchResentChat(b, h, func() int64 {
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
		benchResentChat(b, h, func() int64 {
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

func benchResentChat(b *testing.B, h *harness, size func() int64) {
	client := &http.Client{}
	defer client.CloseIdleConnections()
	var grown, distinct, sent int64
	session := 0
	if _, _, err := resentChatSession(client, h.URL, session); err != nil {
		b.Fatal(err)
	}
	cpu0 := cputime.Process()
	for b.Loop() {
		session++
		before := size()
		d, n, err := resentChatSession(client, h.URL, session)
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

// resentChatSession plays one chat session of resentTurns turns and
// returns the distinct bytes it sent (each message once) and all it sent.
func resentChatSession(client *http.Client, base string, session int) (distinct, sent int64, err error) {
	var history []json.RawMessage
	for turn := range resentTurns {
		user, err := json.Marshal(map[string]string{"role": "user", "content": fmt.Sprintf("session %d turn %d: %s",
			session, turn, strings.Repeat("the quick brown fox jumps over the lazy dog; ", 12))})
		if err != nil {
			return 0, 0, err
		}
		history = append(history, user)
		body, err := json.Marshal(map[string]any{"model": "service", "messages": history})
		if err != nil {
			return 0, 0, err
		}
		sent += int64(len(body))
		distinct += int64(len(user))
		reply, err := historyPost(client, base+"/v1/chat/completions", string(body))
		if err != nil {
			return 0, 0, err
		}
		var r struct {
			Choices []struct {
				Message json.RawMessage `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(reply, &r); err != nil || len(r.Choices) == 0 {
			return 0, 0, fmt.Errorf("chat reply %.200s: %v", reply, err)
		}
		distinct += int64(len(r.Choices[0].Message))
		history = append(history, r.Choices[0].Message)
	}
	return distinct, sent, nil
}
