package runner_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// A chat client that resends its history: each turn's recorded request
// reads back byte for byte (json.Marshal's form of the request), and the
// second turn's is kept by reference to the first's (its row holds the
// two messages it adds, not the history); a stored response's request is
// not (its input is kept as its items).
func TestResentChatRequestKeptByReference(t *testing.T) {
	e := newEnv(t)
	var msgs []runner.Message
	for i := range 40 {
		msgs = append(msgs, runner.Message{Role: []string{"user", "assistant"}[i%2],
			Content: fmt.Sprintf("turn %d: \"handler.go\"\n\t%s", i, strings.Repeat("set the content type; ", 25))})
	}
	turn := func(endpoint string, input []runner.Message) (runner.Run, []byte) {
		t.Helper()
		sp := spec("", false)
		sp.Endpoint, sp.Request.Input = endpoint, input
		h, err := e.svc.Start(t.Context(), sp)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := finish(h); err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(&runner.Request{Input: input})
		if err != nil {
			t.Fatal(err)
		}
		return e.get(t, h.Run().ID), want
	}
	db, err := sql.Open("sqlite", "file:"+e.path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stored := func(id string) (based bool, n int) {
		t.Helper()
		if err := db.QueryRow(`SELECT base_seq IS NOT NULL, length(CAST(request AS BLOB)) FROM run_requests
			WHERE seq = (SELECT seq FROM runs WHERE id = ?)`, id).Scan(&based, &n); err != nil {
			t.Fatal(err)
		}
		return based, n
	}
	first, want := turn(contract.EndpointChat, msgs)
	if !bytes.Equal(first.Request, want) {
		t.Fatalf("turn 1 reads back %d bytes, want %d", len(first.Request), len(want))
	}
	msgs = append(msgs, runner.Message{Role: "assistant", Content: "done"}, runner.Message{Role: "user", Content: "next"})
	second, want := turn(contract.EndpointChat, msgs)
	if !bytes.Equal(second.Request, want) {
		t.Fatalf("turn 2 reads back %d bytes, want %d", len(second.Request), len(want))
	}
	if based, n := stored(second.ID); !based || n > 200 {
		t.Fatalf("turn 2 stores %d bytes of its %d (by reference: %v), want the two messages it adds", n, len(want), based)
	}
	resp, want := turn(contract.EndpointResponses, msgs)
	if !bytes.Equal(resp.Request, want) {
		t.Fatalf("a stored response's request reads back %d bytes, want %d", len(resp.Request), len(want))
	}
	var based int
	if err := db.QueryRow(`SELECT count(*) FROM run_requests WHERE base_seq IS NOT NULL OR prefix_hash IS NOT NULL`).Scan(&based); err != nil || based != 2 {
		t.Fatalf("%d request rows are shared or indexed (%v), want the two chat turns'", based, err)
	}
}
