package mapping_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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

// A conversation's turn maps only the items added since its turn before:
// the items mapped then, when they are still the first ones byte for byte
// and the new ones start a turn. Anything else (an item gone or changed,
// new items that continue a turn, another actor) maps them all; the
// messages are always those of mapping every item.
func TestConversationMapsOnlyNewItems(t *testing.T) {
	m, p := stage(t, func(in []byte) ([]byte, error) {
		var msgs []map[string]string
		for _, it := range gjson.GetBytes(in, "body.input").Array() {
			msgs = append(msgs, map[string]string{"role": it.Get("role").Str + it.Get("type").Str, "content": it.Get("content").Str})
		}
		b, _ := json.Marshal(map[string]any{"request": map[string]any{"input": msgs}})
		return b, nil
	})
	item := func(role, text string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"type":"message","role":%q,"content":%q}`, role, text))
	}
	// turn maps items as a turn of actor does and returns how many items
	// the plugin was given for them.
	turn := func(actor string, items []json.RawMessage) int {
		t.Helper()
		x, _ := filtertest.Exchange(filters.Responses, `{"model":"service","input":"hi"}`)
		x.Identity.TenantID, x.Identity.Actor.ID = "t1", actor
		x.Turn = &turn.Turn{Conversation: &turn.Conversation{ID: "conv_x", SessionID: "sess_x",
			Read: func(context.Context) ([]json.RawMessage, error) { return items, nil }}}
		if err := m.Handle(t.Context(), x, &filtertest.Next{}); err != nil {
			t.Fatal(err)
		}
		before := len(p.Calls(runtime.MapRequest))
		msgs, err := x.Turn.History(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for i, msg := range msgs {
			got = append(got, msg.Role+":"+msg.Content)
			if i < len(items) {
				want = append(want, gjson.GetBytes(items[i], "role").Str+gjson.GetBytes(items[i], "type").Str+":"+gjson.GetBytes(items[i], "content").Str)
			}
		}
		if strings.Join(got, "|") != strings.Join(want, "|") || len(msgs) != len(items) {
			t.Fatalf("messages %q, want %q", got, want)
		}
		n := 0
		for _, c := range p.Calls(runtime.MapRequest)[before:] {
			n += len(gjson.Get(c, "body.input").Array())
		}
		return n
	}
	items := []json.RawMessage{item("user", "u0"), item("assistant", "a0")}
	if n := turn("ada", items); n != 2 {
		t.Fatalf("first turn mapped %d items, want 2", n)
	}
	items = append(items, item("user", "u1"), item("assistant", "a1"))
	if n := turn("ada", items); n != 2 {
		t.Errorf("second turn mapped %d items, want the 2 new ones", n)
	}
	// The same bytes elsewhere in memory are the same items.
	copied := make([]json.RawMessage, len(items))
	for i, it := range items {
		copied[i] = append(json.RawMessage(nil), it...)
	}
	items = append(copied, item("user", "u2"))
	if n := turn("ada", items); n != 1 {
		t.Errorf("third turn mapped %d items, want the new one", n)
	}
	// New items that continue a turn (a call's output after the
	// assistant's call) are mapped with the turn they continue: all.
	items = append(items, json.RawMessage(`{"type":"function_call_output","call_id":"c","output":"ok"}`))
	if n := turn("ada", items); n != len(items) {
		t.Errorf("items continuing a turn: %d mapped, want all %d", n, len(items))
	}
	// An item deleted: all.
	items = append(items[:1:1], items[2:]...)
	if n := turn("ada", items); n != len(items) {
		t.Errorf("after a delete: %d mapped, want all %d", n, len(items))
	}
	// An item changed: all.
	items = slices.Clone(items)
	items[0] = item("user", "U0")
	if n := turn("ada", items); n != len(items) {
		t.Errorf("after a change: %d mapped, want all %d", n, len(items))
	}
	// Another actor's turn maps its own.
	if n := turn("bob", items); n != len(items) {
		t.Errorf("another actor: %d mapped, want all %d", n, len(items))
	}
}
