package mapping_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/filters/turn"
	"github.com/runedge/runedge/plugins/runtime"
)

// A conversation's items are mapped in segments, each well under a
// plugin's input bound (4 MiB) and each starting at a user message, so a
// conversation up to the history bound (8 MiB) maps whole and a turn's
// assistant message and calls are never mapped apart; the messages come
// back in order.
func TestConversationMappedInSegments(t *testing.T) {
	const bound = 2 << 20 // the fake plugin's input bound
	m, p := stage(t, func(in []byte) ([]byte, error) {
		if len(in) > bound {
			return nil, fmt.Errorf("input of %d bytes", len(in))
		}
		var msgs []map[string]string
		for _, it := range gjson.GetBytes(in, "body.input").Array() {
			msgs = append(msgs, map[string]string{"role": it.Get("role").Str + it.Get("type").Str, "content": it.Get("content").Str})
		}
		b, _ := json.Marshal(map[string]any{"request": map[string]any{"input": msgs}})
		return b, nil
	})
	var items []json.RawMessage
	for i := range 12 {
		big := strings.Repeat("x", 600<<10)
		items = append(items,
			json.RawMessage(fmt.Sprintf(`{"type":"message","role":"user","content":"%d %s"}`, i, big)),
			json.RawMessage(`{"type":"message","role":"assistant","content":"a"}`),
			json.RawMessage(`{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}`))
	}
	x, _ := filtertest.Exchange(filters.Responses, `{"model":"service","input":"hi"}`)
	x.Turn = &turn.Turn{Conversation: &turn.Conversation{ID: "conv_x", SessionID: "sess_x",
		Read: func(context.Context) ([]json.RawMessage, error) { return items, nil }}}
	if err := m.Handle(t.Context(), x, &filtertest.Next{}); err != nil {
		t.Fatal(err)
	}
	if n := len(p.Calls(runtime.MapRequest)); n != 1 {
		t.Fatalf("%d map_request calls before the run read the conversation; want the request's alone", n)
	}
	msgs, err := x.Turn.History(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != len(items) {
		t.Fatalf("%d messages from %d items", len(msgs), len(items))
	}
	for i, msg := range msgs {
		if want := gjson.GetBytes(items[i], "role").Str + gjson.GetBytes(items[i], "type").Str; msg.Role != want {
			t.Fatalf("message %d is %q, item %d %q: out of order", i, msg.Role, i, want)
		}
	}
	calls := p.Calls(runtime.MapRequest)[1:]
	if len(calls) < 4 {
		t.Errorf("%d map_request calls for %d bytes of items; want segments", len(calls), 12*(600<<10))
	}
	for i, c := range calls {
		if first := gjson.Get(c, "body.input.0.role").Str; first != "user" {
			t.Errorf("segment %d starts with %q, not a user message: a turn was split", i, first)
		}
	}
}
