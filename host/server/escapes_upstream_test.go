package server

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// escapeLiterals are message texts as a client may write them, one JSON
// string literal each, with every class of escape: quotes and
// backslashes, control characters short and long, the JavaScript line
// separators raw and escaped, HTML characters raw and escaped, surrogate
// pairs and lone surrogates, bytes that are not UTF-8, non-ASCII text
// raw and escaped.
var escapeLiterals = []string{
	`"quotes \" and backslashes \\ and a slash \/ and /"`,
	`"controls \b\f\n\r\t \u0000 \u0001 \u001f \u007f and DEL ` + "\x7f" + `"`,
	`"separators \u2028 \u2029 and raw ` + "\u2028\u2029" + `"`,
	`"html <b>&amp;</b> \u003c\u003e\u0026"`,
	`"pairs \ud83d\ude00 and ` + "\U0001F600" + ` and \uD83D\uDE00"`,
	`"lone \ud800 and \udc00 and \ud83d\u0041 and \ud83d\ud83d\ude00 at the end \ud83d"`,
	"\"bytes \xff and \xc3 and \xed\xa0\x80 that are not UTF-8\"",
	`"non-ASCII é 漢字 \u00e9\u6f22"`,
	`"plain"`,
	`""`,
}

// TestEscapedTextsReachTheUpstream: a history with every escape class,
// as a chat completion and as Responses input (a string content and
// input_text parts), reaches an upstream on a real socket as valid JSON
// in valid UTF-8 whose every message reads as encoding/json reads the
// client's text (a byte that is not UTF-8 and a lone surrogate as
// U+FFFD), with no lone surrogate escape left for a reader that would
// keep it. The texts now go upstream as the client escaped them where
// that is safe (runner.Message.ContentJSON); this holds the copy to what
// escaping them afresh sent.
func TestEscapedTextsReachTheUpstream(t *testing.T) {
	up := newScripted(t, wholeOf("ok"))
	h := start(t, viaOpenAI(up.srv.URL, nil))

	var want []string
	for _, lit := range escapeLiterals {
		var s string
		if err := json.Unmarshal([]byte(lit), &s); err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		want = append(want, s)
	}
	var chat, items, parts []string
	for i, lit := range escapeLiterals {
		role := [...]string{"user", "assistant"}[i%2]
		chat = append(chat, `{"role":"`+role+`","content":`+lit+`}`)
		items = append(items, `{"role":"`+role+`","content":`+lit+`}`)
		if role == "user" {
			parts = append(parts, `{"role":"user","content":[{"type":"input_text","text":`+lit+`}]}`)
		} else {
			parts = append(parts, `{"role":"assistant","content":[{"type":"output_text","text":`+lit+`}]}`)
		}
	}
	for _, c := range []struct{ name, path, body string }{
		{"chat", "/v1/chat/completions", `{"model":"service","messages":[` + strings.Join(chat, ",") + `]}`},
		{"chat-stream", "/v1/chat/completions", `{"model":"service","stream":true,"messages":[` + strings.Join(chat, ",") + `]}`},
		{"responses", "/v1/responses", `{"model":"service","store":false,"input":[` + strings.Join(items, ",") + `]}`},
		{"responses-parts", "/v1/responses", `{"model":"service","input":[` + strings.Join(parts, ",") + `]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := up.sentFor(t, h, c.path, c.body)
			if !utf8.ValidString(got) {
				t.Errorf("upstream body is not UTF-8: %q", got)
			}
			var wire struct {
				Messages []struct{ Role, Content string }
			}
			if err := json.Unmarshal([]byte(got), &wire); err != nil {
				t.Fatalf("upstream body: %v\n%s", err, got)
			}
			if len(wire.Messages) != len(want) {
				t.Fatalf("upstream got %d messages, want %d: %s", len(wire.Messages), len(want), got)
			}
			for i, m := range wire.Messages {
				if m.Content != want[i] {
					t.Errorf("message %d: upstream read %q, want %q (client wrote %s)", i, m.Content, want[i], escapeLiterals[i])
				}
			}
			for _, lone := range []string{`\ud800`, `\udc00`, `\ud83d\u0041`, `\ud83d\ud83d`, `\ud83d"`} {
				if strings.Contains(got, lone) {
					t.Errorf("upstream body keeps the lone surrogate %s: %s", lone, got)
				}
			}
		})
	}
}

// TestPlainTextsReachTheUpstream: a body whose every string is plain
// (ASCII, one-letter escapes other than \/: the model stage tells the
// mapping so, which then keeps its texts escaped without reading them)
// reaches the upstream with every text as encoding/json reads the
// client's.
func TestPlainTextsReachTheUpstream(t *testing.T) {
	up := newScripted(t, wholeOf("ok"))
	h := start(t, viaOpenAI(up.srv.URL, nil))
	lits := []string{`"quotes \" and backslashes \\ \\\\ at the end \\"`, `"controls \b\f\n\r\t and DEL ` + "\x7f" + `"`,
		`"html <b>&amp;</b>\n"`, `"\\"`, `"plain"`, `""`}
	var want, msgs, items []string
	for i, lit := range lits {
		var s string
		if err := json.Unmarshal([]byte(lit), &s); err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		want = append(want, s)
		role := [...]string{"user", "assistant"}[i%2]
		msgs = append(msgs, `{"role":"`+role+`","content":`+lit+`}`)
		items = append(items, `{"type":"message","role":"`+role+`","content":`+lit+`}`)
	}
	for _, c := range []struct{ name, path, body string }{
		{"chat", "/v1/chat/completions", `{"model":"service","messages":[` + strings.Join(msgs, ",") + `]}`},
		{"responses", "/v1/responses", `{"model":"service","store":false,"input":[` + strings.Join(items, ",") + `]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			sent := up.sentFor(t, h, c.path, c.body)
			var wire struct {
				Messages []struct{ Role, Content string }
			}
			if err := json.Unmarshal([]byte(sent), &wire); err != nil {
				t.Fatalf("upstream body: %v\n%s", err, sent)
			}
			if len(wire.Messages) != len(want) {
				t.Fatalf("upstream got %d messages, want %d: %s", len(wire.Messages), len(want), sent)
			}
			for i, m := range wire.Messages {
				if m.Content != want[i] {
					t.Errorf("message %d: upstream read %q, want %q (client wrote %s)", i, m.Content, want[i], lits[i])
				}
			}
		})
	}
}
