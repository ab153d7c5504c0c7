package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkResentChat is BenchmarkResentSession's client as a chat
// completion: each of resentTurns turns resends every message so far, the
// answers as the assistant's messages, and one new user message of about
// 560 bytes. Chat keeps no response items: what the store grows by is the
// run and its recorded request, which a turn of runner.SharedRequestMin
// bytes or more keeps by reference to the turn before (RATIONALE.md
// "Agent-sized bodies"). The metrics are BenchmarkResentSession's.
func BenchmarkResentChat(b *testing.B) {
	onStores(b, func(b *testing.B, h *harness, size func() int64) { benchResent(b, h, size, resentChatSession) })
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
