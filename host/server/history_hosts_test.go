package server

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner/store/postgres/pgtest"
)

// TestHistoryKeptAcrossHosts: hosts sharing a store each keep what they
// replayed of a previous_response_id chain and read of a conversation;
// what another host deletes is never replayed from what they keep. Host A
// keeps a chain and a conversation, host B deletes a response of the
// chain and an item of the conversation, and A's next turn counts (the
// offline provider's input_tokens: the words of the whole input) what a
// host started after the deletes, which never kept either, counts from
// the store. On a SQLite file and on PostgreSQL, whose generation the
// commit raises (deferred triggers).
func TestHistoryKeptAcrossHosts(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "shared.db")
		historyAcrossHosts(t, func(c *config.Config) { c.Store.Driver, c.Store.Path = "sqlite", path })
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.Schema(t)
		historyAcrossHosts(t, func(c *config.Config) { c.Store.Driver, c.Store.DSN = "postgres", dsn })
	})
}

func historyAcrossHosts(t *testing.T, store func(*config.Config)) {
	host := func(id string) *harness {
		return start(t, func(c *config.Config) { store(c); c.Host.ID = id })
	}
	a, b := host("host-a"), host("host-b")
	words := func(n int, tag string) string { return strings.TrimSpace(strings.Repeat(tag+" ", n)) }
	post := func(h *harness, path, req string) string {
		t.Helper()
		st, reply := convDo(t, h, "POST", path, req)
		if st != 200 {
			t.Fatalf("POST %s: %d %s", path, st, reply)
		}
		return reply
	}

	// A chain of four turns on host A, which then keeps it; B deletes
	// the second.
	var chain []string
	prev := ""
	for i := range 4 {
		req := `{"model":"service","input":"` + words(10+10*i, fmt.Sprintf("chain%d", i)) + `"`
		if prev != "" {
			req += `,"previous_response_id":"` + prev + `"`
		}
		prev = gjson.Get(post(a, "/v1/responses", req+"}"), "id").Str
		chain = append(chain, prev)
	}
	count := func(h *harness) int64 {
		t.Helper()
		return gjson.Get(post(h, "/v1/responses/input_tokens",
			`{"model":"service","input":"next","previous_response_id":"`+prev+`"}`), "input_tokens").Int()
	}
	kept := count(a)
	if st, reply := convDo(t, b, "DELETE", "/v1/responses/"+chain[1], ""); st != 200 {
		t.Fatalf("delete response: %d %s", st, reply)
	}
	// Host C, started after the delete, never kept anything: it reads
	// from the store. (Each removal raises the tenant's generation, so
	// each is checked before the next.)
	c := host("host-c")
	if got, want := count(a), count(c); got != want || want >= kept {
		t.Errorf("continuing the chain after another host deleted a response of it: host A counts %d tokens, the store %d (%d before the delete)", got, want, kept)
	}

	// Two conversations alike: X on host A, which keeps it, Y on host B;
	// B then deletes the second item of each, and A's next turn of X
	// counts what C's turn of Y (C never read it) counts.
	items := `{"items":[{"type":"message","role":"user","content":"` + words(5, "first") + `"},` +
		`{"type":"message","role":"user","content":"` + words(40, "second") + `"},` +
		`{"type":"message","role":"user","content":"` + words(7, "third") + `"}]}`
	x := gjson.Get(post(b, "/v1/conversations", items), "id").Str
	y := gjson.Get(post(b, "/v1/conversations", items), "id").Str
	turn := func(h *harness, conv, say string) int64 {
		t.Helper()
		return gjson.Get(post(h, "/v1/responses", `{"model":"service","conversation":"`+conv+`","input":"`+say+`"}`),
			"usage.input_tokens").Int()
	}
	for i := range 2 {
		say := words(3+i, "turn")
		if ta, tb := turn(a, x, say), turn(b, y, say); ta != tb {
			t.Fatalf("turn %d: host A counts %d tokens, host B %d, for alike conversations", i, ta, tb)
		}
	}
	for _, conv := range []string{x, y} {
		_, list := convDo(t, b, "GET", "/v1/conversations/"+conv+"/items?order=asc", "")
		second := gjson.Get(list, "data.1.id").Str
		if st, reply := convDo(t, b, "DELETE", "/v1/conversations/"+conv+"/items/"+second, ""); st != 200 {
			t.Fatalf("delete item %s: %d %s", second, st, reply)
		}
	}
	say := words(6, "after")
	if got, want := turn(a, x, say), turn(c, y, say); got != want {
		t.Errorf("a conversation turn after another host deleted an item: host A counts %d tokens, the store %d", got, want)
	}
}
