package contract

import (
	"strings"
	"testing"
)

// A run id as runner.NewID makes them: the prefix and 32 base32 characters.
const runID = "run_01jd3k8v2q7n5m4p6r8s0t2u4v6w8x0y"

var x = strings.TrimPrefix(runID, RunPrefix)

// Every id derived from a run id carries its suffix behind its own prefix.
func TestDerivedIDs(t *testing.T) {
	for _, c := range []struct{ name, got, want string }{
		{"ResponseID", ResponseID(runID), "resp_" + x},
		{"CompletionID", CompletionID(runID), "chatcmpl-" + x},
		{"MessageID", MessageID(runID), "msg_" + x},
		{"InputMessageID", InputMessageID(runID, 3), "msg_" + x + "_3"},
		{"CallID", CallID(MessageID(runID), 0), "fc_" + x + "_0"},
		{"CallID 12", CallID(MessageID(runID), 12), "fc_" + x + "_12"},
		{"ReasoningID", ReasoningID(MessageID(runID)), "rs_" + x},
		{"CompactionID", CompactionID(runID), "cmp_" + x},
		{"ConversationID", ConversationID("sess_" + x), "conv_" + x},
		{"ConversationID of a non-session", ConversationID("thread_" + x), ""},
		{"ConversationID of a bare prefix", ConversationID("sess_"), ""},
		{"OwnSessionID", OwnSessionID(runID), "sess_" + x},
		{"OwnThreadID", OwnThreadID(runID), "thread_" + x},
		{"OpenerID of a response", OpenerID("resp_" + x), ""},
		{"OpenerID of a bare prefix", OpenerID("sess_"), ""},
		{"OpenerID of a run", OpenerID(runID), ""},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
}

// What the contract derives from a run id, it reads back to the same run.
func TestRoundTrips(t *testing.T) {
	for _, run := range []string{runID, "run_1", "run_a-b", "run_" + strings.Repeat("z", 64)} {
		if got, ok := RunIDOf(ResponseID(run)); !ok || got != run {
			t.Errorf("RunIDOf(ResponseID(%q)) = %q, %v", run, got, ok)
		}
		msg := MessageID(run)
		for _, i := range []int{0, 1, 9, 10, 4096} {
			if m, j, ok := CallOf(CallID(msg, i)); !ok || m != msg || j != i {
				t.Errorf("CallOf(CallID(%q, %d)) = %q, %d, %v", msg, i, m, j, ok)
			}
		}
	}
	for _, run := range []string{runID, "run_1"} {
		if got := OpenerID(OwnSessionID(run)); got != run {
			t.Errorf("OpenerID(OwnSessionID(%q)) = %q", run, got)
		}
		if got := OpenerID(OwnThreadID(run)); got != run {
			t.Errorf("OpenerID(OwnThreadID(%q)) = %q", run, got)
		}
	}
	for _, sess := range []string{"sess_" + x, "sess_1"} {
		conv := ConversationID(sess)
		if got, ok := SessionIDOf(conv); !ok || got != sess {
			t.Errorf("SessionIDOf(ConversationID(%q)) = %q, %v", sess, got, ok)
		}
	}
}

// A malformed id a client sends is refused by the parser, so the caller
// answers it as an unknown id (404 not_found, or 400
// previous_response_not_found) and never looks it up: not a 500.
func TestMalformedIDsAreRefused(t *testing.T) {
	long := "resp_" + strings.Repeat("a", MaxIDLength)
	for _, id := range []string{"", "resp_", "resp", "run_" + x, "msg_" + x, "conv_" + x, "RESP_" + x,
		"resp_a/b", "resp_a b", "resp_a%2f", "resp_é", "resp_a\x00", "resp_a\n", long, " resp_" + x} {
		if got, ok := RunIDOf(id); ok {
			t.Errorf("RunIDOf(%q) = %q, accepted", id, got)
		}
	}
	for _, id := range []string{"", "conv_", "sess_" + x, "conv_a/b", "conv_../x", "conv_" + strings.Repeat("a", MaxIDLength)} {
		if got, ok := SessionIDOf(id); ok {
			t.Errorf("SessionIDOf(%q) = %q, accepted", id, got)
		}
	}
	for _, id := range []string{"", "fc_", "fc_" + x, "fc__1", "fc_" + x + "_", "fc_" + x + "_-1", "fc_" + x + "_01",
		"fc_" + x + "_+1", "fc_" + x + "_1a", "msg_" + x + "_1", "fc_a/b_1", "fc_" + x + "_99999999999999999999"} {
		if m, i, ok := CallOf(id); ok {
			t.Errorf("CallOf(%q) = %q, %d, accepted", id, m, i)
		}
	}
	for _, id := range []string{"", "sess_", "conv_" + x, "sess_a/b"} {
		if IsSessionID(id) {
			t.Errorf("IsSessionID(%q) = true", id)
		}
	}
	if !IsSessionID("sess_" + x) {
		t.Errorf("IsSessionID(sess_%s) = false", x)
	}
}

// TestIsItemID: an item id a client chooses is 1 to MaxIDLength
// letters, digits, '-' and '_', whatever its prefix.
func TestIsItemID(t *testing.T) {
	for id, ok := range map[string]bool{
		"msg_abc-1_Z":                      true,
		"item_1":                           true,
		strings.Repeat("a", MaxIDLength):   true,
		strings.Repeat("a", MaxIDLength+1): false,
		"":                                 false,
		"../../etc/passwd":                 false,
		"<script>":                         false,
		"msg_a/b":                          false,
		"msg a":                            false,
		"msg_é":                            false,
	} {
		if IsItemID(id) != ok {
			t.Errorf("IsItemID(%.40q) = %v, want %v", id, !ok, ok)
		}
	}
}
