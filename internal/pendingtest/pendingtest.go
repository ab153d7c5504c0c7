// Package pendingtest builds pending messages for tests: a client's text
// kept as its escaped JSON literal (native.Message.SetContentPending),
// beside the same message with the text decoded by encoding/json, which
// every reader of the pending one must agree with.
package pendingtest

import (
	"encoding/json"
	"testing"

	"github.com/runedge/runedge/internal/jsonfast"
	"github.com/runedge/runedge/runner/native"
)

// Message returns lit, a JSON string literal with an escape, as a pending
// message of role and as the same message with its text decoded. It fails
// t when lit is not a literal the host keeps pending
// (jsonfast.PendingLiteral).
func Message(t testing.TB, role, lit string) (pending, decoded native.Message) {
	t.Helper()
	var text string
	if err := json.Unmarshal([]byte(lit), &text); err != nil {
		t.Fatalf("%s: %v", lit, err)
	}
	n, marshaled, ok := jsonfast.PendingLiteral(jsonfast.Value(lit))
	if !ok {
		t.Fatalf("%s is not kept pending", lit)
	}
	pending.Role = role
	pending.SetContentPending(lit, n, marshaled)
	return pending, native.Message{Role: role, Content: text}
}
