package mockupstream

import (
	"bytes"
	"fmt"
	"strconv"
)

// AgentMessages is how many messages AgentChat's history carries.
const AgentMessages = 400

// AgentChat is an agent-sized chat completion body for model: a system
// prompt and a 399-message history of alternating user and assistant
// turns, about 570 bytes each (some 230 KB in all), the size a coding agent
// or any client that keeps its own session resends every turn. Its text has
// the escapes such text has (newlines, quotes, tabs), so a reader has to
// unescape. stream asks for a stream. Deterministic: the same bytes on
// every call.
func AgentChat(model string, stream bool) []byte {
	var b bytes.Buffer
	b.Grow(240 << 10)
	b.WriteString(`{"model":`)
	b.WriteString(strconv.Quote(model))
	if stream {
		b.WriteString(`,"stream":true`)
	}
	b.WriteString(`,"messages":[{"role":"system","content":"You are a coding agent. Read the files you are shown, answer with a plan, then with the edits.\nKeep \"answers\" short."}`)
	for i := 1; i < AgentMessages; i++ {
		role := "user"
		if i%2 == 0 {
			role = "assistant"
		}
		fmt.Fprintf(&b, `,{"role":%q,"content":"`, role)
		agentText(&b, i)
		b.WriteString(`"}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// AgentInput is the same history as a Responses request's input: 400
// message items (the system prompt as a developer message).
func AgentInput(model string, stream bool) []byte {
	var b bytes.Buffer
	b.Grow(250 << 10)
	b.WriteString(`{"model":`)
	b.WriteString(strconv.Quote(model))
	if stream {
		b.WriteString(`,"stream":true`)
	}
	b.WriteString(`,"store":false,"input":[{"type":"message","role":"developer","content":"You are a coding agent. Read the files you are shown, answer with a plan, then with the edits.\nKeep \"answers\" short."}`)
	for i := 1; i < AgentMessages; i++ {
		role := "user"
		if i%2 == 0 {
			role = "assistant"
		}
		fmt.Fprintf(&b, `,{"type":"message","role":%q,"content":"`, role)
		agentText(&b, i)
		b.WriteString(`"}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// agentText writes turn i's text, JSON-escaped, about 540 bytes of JSON.
func agentText(b *bytes.Buffer, i int) {
	fmt.Fprintf(b, `Turn %d: in file pkg/mod%03d/handler.go the function \"serve\" reads the request,\ncalls the store and writes the reply.\n\tfunc serve(w http.ResponseWriter, r *http.Request) {\n\t\tv, err := store.Get(r.Context(), r.URL.Query().Get(\"id\"))\n\t\tif err != nil {\n\t\t\thttp.Error(w, err.Error(), 500)\n\t\t\treturn\n\t\t}\n\t\tjson.NewEncoder(w).Encode(v)\n\t}\nThe test covers the error path but not a missing id; a 404 would be better than a 500 there, and the reply should set its content type. `, i, i%97)
	b.WriteString(`Next step: add the check and a test for it.`)
}
