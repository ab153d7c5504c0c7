package compat

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/runedge/runedge/plugins/guestjson"
)

// Samples for SelfTest: one request and one result per endpoint.
const (
	selfTestChatRequest = `{"endpoint":"chat.completions","tenant_id":"t","actor":{"id":"a","type":"service","name":"a"},` +
		`"body":{"model":"service","messages":[{"role":"user","content":"ping"}]}}`
	selfTestResponsesRequest = `{"endpoint":"responses","tenant_id":"t","actor":{"id":"a","type":"service","name":"a"},` +
		`"body":{"model":"service","input":"ping","instructions":"be brief"}}`
	selfTestResult = `","id":"id_1","message_id":"msg_1","created":1700000000,"model":"service","status":"completed",` +
		`"result":{"text":"pong","finish_reason":"stop","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}},"echo":`
)

// SelfTest maps a sample request and result of each endpoint and checks that
// the outputs are valid JSON (checked strictly, with gjson's validator)
// saying what they should. A plugin runs it when
// it is loaded, so a build that cannot map is refused before it serves.
func SelfTest() error {
	for _, c := range []struct {
		endpoint, request, input, reply, path string
	}{
		{EndpointChat, selfTestChatRequest, "request input 0 content", "pong", "choices 0 message content"},
		{EndpointResponses, selfTestResponsesRequest, "request input 0 content", "pong", "output 0 content 0 text"},
	} {
		mapped, err := MapRequest([]byte(c.request))
		if err != nil {
			return errors.New("compat self-test: " + c.endpoint + " request: " + err.Error())
		}
		if !json.Valid(mapped) || !at(mapped, c.input).Is("ping") {
			return errors.New("compat self-test: " + c.endpoint + " request mapped to an unexpected body")
		}
		in := `{"endpoint":"` + c.endpoint + selfTestResult + string(at(mapped, "echo")) + `}`
		reply, err := MapResult([]byte(in))
		if err != nil {
			return errors.New("compat self-test: " + c.endpoint + " result: " + err.Error())
		}
		if !json.Valid(reply) || !at(reply, c.path).Is(c.reply) {
			return errors.New("compat self-test: " + c.endpoint + " result mapped to an unexpected body")
		}
	}
	var ie *InputError
	if _, err := MapRequest([]byte(`{"endpoint":"chat.completions","body":{"model":"service"}}`)); !errors.As(err, &ie) {
		return errors.New("compat self-test: a body without messages was not refused as invalid input")
	}
	return nil
}

// at follows a space-separated path of keys and array indexes (single
// digits) from the root of doc.
func at(doc []byte, path string) value {
	v := guestjson.Parse(string(doc))
	for _, step := range strings.Fields(path) {
		if len(step) == 1 && '0' <= step[0] && step[0] <= '9' {
			n, found := int(step[0]-'0'), value("")
			v.Elements(func(e value) bool {
				if n == 0 {
					found = e
				}
				n--
				return n >= 0
			})
			v = found
			continue
		}
		v = v.Get(step)
	}
	return v
}
