package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner/store/postgres/pgtest"
)

// TestResentItemIDIsRefused: an input item of POST /v1/responses whose
// client-chosen id already names an item of the conversation it continues
// (one added through the Conversations API, or the output item of an
// earlier turn, as an SDK that resends its history sends them) is refused
// as OpenAI refuses it: 400 invalid_body naming input, the message naming
// the id, no run, and the conversation as it was. An id the conversation
// does not hold is kept, and a request without a conversation may repeat
// ids (its stored input items get ids of their own). Before, the run ran
// and its commit broke the conversation's unique index: a 500 on SQLite
// and on PostgreSQL.
func TestResentItemIDIsRefused(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { resentItemIDIsRefused(t, start(t, nil)) })
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.Schema(t)
		resentItemIDIsRefused(t, start(t, func(c *config.Config) { c.Store.Driver, c.Store.DSN = "postgres", dsn }))
	})
}

func resentItemIDIsRefused(t *testing.T, h *harness) {
	_, created := convDo(t, h, "POST", "/v1/conversations", `{"items":[{"type":"message","role":"user","content":"hi"}]}`)
	conv := gjson.Get(created, "id").Str
	listed := func() string {
		t.Helper()
		st, b := convDo(t, h, "GET", "/v1/conversations/"+conv+"/items?order=asc", "")
		if st != 200 {
			t.Fatalf("listing the conversation: %d %s", st, b)
		}
		return gjson.Get(b, "data").Raw
	}
	added := gjson.Get(listed(), "0.id").Str
	// A turn, whose output item the conversation then holds too.
	st, b := convDo(t, h, "POST", "/v1/responses", `{"model":"service","conversation":"`+conv+`","input":"next"}`)
	if st != 200 {
		t.Fatalf("a turn: %d %s", st, b)
	}
	output := gjson.Get(b, "output.0.id").Str
	before, runs := listed(), h.runCount()
	for name, item := range map[string]string{
		"an added item's id":       `{"type":"message","role":"user","content":"again","id":"` + added + `"}`,
		"an earlier output's id":   `{"type":"message","role":"assistant","content":"again","id":"` + output + `"}`,
		"after a new item's input": `{"role":"user","content":"new","id":"msg_client_new"},{"type":"message","role":"user","content":"again","id":"` + added + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			res := h.do("POST", "/v1/responses", `{"model":"service","conversation":"`+conv+`","input":[`+item+`]}`, "x-service-tenant-id", "t1")
			b := wantError(t, res, http.StatusBadRequest, "invalid_request_error", "invalid_body")
			e := gjson.GetBytes(b, "error")
			if e.Get("param").Str != "input" || !strings.Contains(e.Get("message").Str, "Duplicate item found with id") {
				t.Errorf("the refusal does not name input and the duplicate: %s", b)
			}
		})
	}
	if after := listed(); after != before {
		t.Errorf("a refused turn changed the conversation:\nbefore %s\nafter  %s", before, after)
	}
	if n := h.runCount(); n != runs {
		t.Errorf("a refused turn made a run (%d → %d)", runs, n)
	}
	// An id the conversation does not hold is the client's.
	st, b = convDo(t, h, "POST", "/v1/responses", `{"model":"service","conversation":"`+conv+`","input":[{"role":"user","content":"new","id":"msg_client_new"}]}`)
	if st != 200 {
		t.Fatalf("a new id: %d %s", st, b)
	}
	if st, b := convDo(t, h, "GET", "/v1/conversations/"+conv+"/items/msg_client_new", ""); st != 200 || gjson.Get(b, "content.0.text").Str != "new" {
		t.Fatalf("the new id reads back: %d %s", st, b)
	}
	// Without a conversation, ids may repeat: each stored input item is its
	// response's.
	for range 2 {
		st, b := convDo(t, h, "POST", "/v1/responses", `{"model":"service","store":true,"input":[{"type":"message","role":"user","content":"again","id":"`+added+`"}]}`)
		if st != 200 {
			t.Fatalf("store:true with a repeated id: %d %s", st, b)
		}
	}
}
