package contract

import (
	"strconv"
	"strings"
)

// The prefixes of runedge's ids. Every id is a prefix and a suffix; the
// runner makes the suffix of its own ids (run, thread, session) and the
// compatible ids of a run share its run's suffix, so each leads back to
// the run that made it.
const (
	RunPrefix     = "run_"
	ThreadPrefix  = "thread_"
	SessionPrefix = "sess_"
	// ConversationPrefix names a session in the Conversations API:
	// conv_X is sess_X.
	ConversationPrefix = "conv_"
	// ResponsePrefix names a run in the Responses API: resp_X is run_X.
	ResponsePrefix = "resp_"
	// CompletionPrefix names a run in Chat Completions: chatcmpl-X is
	// run_X.
	CompletionPrefix = "chatcmpl-"
	// MessagePrefix starts message item ids: msg_X is the output message
	// of run_X; input items get ids of their own (runner.NewID).
	MessagePrefix = "msg_"
	// CallPrefix starts function_call item ids: fc_X_i is the i-th call
	// of the output message msg_X.
	CallPrefix = "fc_"
	// ReasoningPrefix starts reasoning item ids: rs_X is the reasoning of
	// the output message msg_X.
	ReasoningPrefix = "rs_"
	// CompactionPrefix starts compaction item ids: cmp_X is the item a
	// compaction run run_X made.
	CompactionPrefix = "cmp_"
)

// MaxIDLength bounds an id a client sends: longer is malformed. runedge's
// own ids are the prefix and 32 characters (runner.NewID).
const MaxIDLength = 128

// suffix returns id without prefix, and whether id is prefix followed by
// a well-formed suffix: 1 to MaxIDLength-len(prefix) URL-safe characters
// (letters, digits, '-' and '_'), as every id runedge makes is.
func suffix(id, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || rest == "" || len(id) > MaxIDLength || !urlSafe(rest) {
		return "", false
	}
	return rest, true
}

// urlSafe reports whether s is only letters, digits, '-' and '_'.
func urlSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// IsItemID reports whether id is a well-formed item id, as a client may
// choose one for a conversation item or name one in an item_reference:
// 1 to MaxIDLength letters, digits, '-' and '_' (the rule of every id a
// client sends, with whatever prefix the client's items have: msg_, fc_,
// OpenAI's own). Anything else is refused where it would be stored, and is
// an unknown item in a reference, never looked up.
func IsItemID(id string) bool {
	return id != "" && len(id) <= MaxIDLength && urlSafe(id)
}

// ResponseID is the id of the Response of run runID: resp_X for run_X.
func ResponseID(runID string) string { return ResponsePrefix + strings.TrimPrefix(runID, RunPrefix) }

// RunIDOf returns the run behind a response id (resp_X → run_X). ok is
// false for an id that is not a well-formed response id: a client's
// malformed id is answered as an unknown one (404 not_found, or 400
// previous_response_not_found), never looked up.
func RunIDOf(responseID string) (runID string, ok bool) {
	rest, ok := suffix(responseID, ResponsePrefix)
	if !ok {
		return "", false
	}
	return RunPrefix + rest, true
}

// OwnSessionID is the id of the session a run opens when its client
// names none: sess_X for run_X. OwnThreadID is the id of the thread a run
// opens: thread_X for run_X. A session or thread made this way leads back
// to the run that opened it (OpenerID), so a store may find it through
// that run's id rather than index it (the SQLite store's partial
// runs_session and runs_thread, RATIONALE.md "A new session's ids are its
// run's"). They stay unguessable: the run's suffix is NewID's 112 random
// bits, and every lookup by them is the tenant's.
func OwnSessionID(runID string) string { return SessionPrefix + strings.TrimPrefix(runID, RunPrefix) }

// OwnThreadID is the id of the thread run runID opens: thread_X for run_X
// (see OwnSessionID).
func OwnThreadID(runID string) string { return ThreadPrefix + strings.TrimPrefix(runID, RunPrefix) }

// OpenerID returns the run that opened session or thread id if a run made
// it (OwnSessionID, OwnThreadID): run_X for sess_X or thread_X, "" for
// any other id. Whether that run exists and holds the session or thread
// is the store's to check: a client-named id, a conversation's session or
// an id made before runedge derived them leads to no run.
func OpenerID(id string) string {
	for _, prefix := range []string{SessionPrefix, ThreadPrefix} {
		if rest, ok := strings.CutPrefix(id, prefix); ok && rest != "" {
			return RunPrefix + rest
		}
	}
	return ""
}

// CompletionID is the id of the chat.completion of run runID: chatcmpl-X
// for run_X.
func CompletionID(runID string) string {
	return CompletionPrefix + strings.TrimPrefix(runID, RunPrefix)
}

// MessageID is the id of the output message of run runID: msg_X for
// run_X, the id the Response gives it and the store records.
func MessageID(runID string) string { return MessagePrefix + strings.TrimPrefix(runID, RunPrefix) }

// InputMessageID is the id of the n-th input message a compaction run
// runID shows: msg_X_n for run_X.
func InputMessageID(runID string, n int) string {
	return MessageID(runID) + "_" + strconv.Itoa(n)
}

// CallID is the id of the i-th function_call output item of the response
// whose message id is messageID: fc_X_i for msg_X. The host frames streamed
// calls with it and the default mapping writes the final Response with it,
// so the ids in the events and in the final object agree.
func CallID(messageID string, i int) string {
	return CallPrefix + strings.TrimPrefix(messageID, MessagePrefix) + "_" + strconv.Itoa(i)
}

// CallOf splits a function_call item id (CallID) into the id of the output
// message that holds the call and the call's index; ok is false for an id
// that is not a well-formed call id.
func CallOf(callID string) (messageID string, i int, ok bool) {
	rest, ok := suffix(callID, CallPrefix)
	j := strings.LastIndexByte(rest, '_')
	if !ok || j <= 0 {
		return "", 0, false
	}
	i, err := strconv.Atoi(rest[j+1:])
	if err != nil || i < 0 || strconv.Itoa(i) != rest[j+1:] {
		return "", 0, false
	}
	return MessagePrefix + rest[:j], i, true
}

// ReasoningID is the id of the reasoning item of the response whose output
// message is messageID: rs_X for msg_X.
func ReasoningID(messageID string) string {
	return ReasoningPrefix + strings.TrimPrefix(messageID, MessagePrefix)
}

// CompactionID is the id of the compaction item of compaction run runID:
// cmp_X for run_X.
func CompactionID(runID string) string {
	return CompactionPrefix + strings.TrimPrefix(runID, RunPrefix)
}

// ConversationID is the conversation id of a session (sess_X → conv_X),
// "" for an id that is not a session's.
func ConversationID(sessionID string) string {
	rest, ok := strings.CutPrefix(sessionID, SessionPrefix)
	if !ok || rest == "" {
		return ""
	}
	return ConversationPrefix + rest
}

// SessionIDOf returns the session of a conversation id (conv_X → sess_X);
// ok is false for an id that is not a well-formed conversation id, which
// is answered as an unknown conversation (404 not_found).
func SessionIDOf(conversationID string) (sessionID string, ok bool) {
	rest, ok := suffix(conversationID, ConversationPrefix)
	if !ok {
		return "", false
	}
	return SessionPrefix + rest, true
}

// IsSessionID reports whether id is a well-formed session id.
func IsSessionID(id string) bool {
	_, ok := suffix(id, SessionPrefix)
	return ok
}
