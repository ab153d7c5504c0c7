package abi

import (
	"testing"

	"github.com/runedge/runedge/plugins/guestjson"
	"github.com/runedge/runedge/runner/native"
)

// The view the host hands a native map_result is field for field the view
// the guest reads from the JSON envelope: every field present and absent,
// awkward strings, tool calls, reasoning, both statuses, an echo with and
// without space around it, and a reused buffer too small and too big.
func TestViewIsTheParsedEnvelope(t *testing.T) {
	var inputs []ResultInput
	for _, s := range awkward {
		for _, status := range []string{ResultCompleted, ResultInProgress} {
			in := ResultInput{Endpoint: EndpointResponses, ID: "resp_" + s, MessageID: "msg_1", Created: 1700000000,
				SessionID: "sess_1", RunID: "run_1", Model: "service", Status: status, Echo: append(guestjson.AppendString([]byte(` {"k":`), s), "}\n"...)}
			if status == ResultCompleted {
				in.Completed = 1700000009
				in.Result = native.Result{Text: s, FinishReason: "length", Reasoning: s,
					Usage:     native.Usage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3},
					ToolCalls: []native.ToolCall{{ID: "call_1", Name: "f", Arguments: `{"q":"` + s + `"}`}, {ID: "call_2", Name: s}}}
			}
			inputs = append(inputs, in)
		}
	}
	inputs = append(inputs, ResultInput{Endpoint: EndpointChat, ID: "chatcmpl-1", Created: 1, Model: "service", Status: ResultCompleted,
		Result: native.Result{Text: "hi", FinishReason: "stop"}})
	buf := make([]byte, 0, 8)
	for _, in := range inputs {
		want, err := ViewResultInput(in.AppendJSON(nil))
		if err != nil {
			t.Fatal(err)
		}
		var got ResultView
		got, buf = in.View(buf)
		if got != want {
			t.Errorf("view of %+v:\n got %+v\nwant %+v", in, got, want)
		}
		if got.Decode().Result.Text != want.Decode().Result.Text {
			t.Errorf("decoded text differs")
		}
	}
}

// The request view the host hands a native map_request is field for field
// the view the guest reads from the envelope: awkward strings, a body with
// space around it, and none.
func TestRequestViewIsTheParsedEnvelope(t *testing.T) {
	var buf []byte
	for _, s := range awkward {
		for _, body := range []string{`{"model":"service","messages":[]}`, " \n{\"model\":" + string(guestjson.AppendString(nil, s)) + "}\r\n", ""} {
			in := RequestInput{Endpoint: EndpointChat, TenantID: s, Actor: Actor{ID: s, Type: "user", Name: s}, Body: []byte(body)}
			want, err := ViewRequestInput(in.AppendJSON(nil))
			if err != nil {
				t.Fatal(err)
			}
			var got RequestView
			got, buf = in.View(buf)
			if got != want {
				t.Errorf("view of %+v:\n got %+v\nwant %+v", in, got, want)
			}
		}
	}
}

// FuzzViewIsTheParsedEnvelope: for any strings and numbers, the views the
// host hands a native mapping equal what the guest parses from the
// envelopes (TestViewIsTheParsedEnvelope's property on arbitrary input).
// The echo and body are valid JSON, as the host's are (the mapping's own
// output and a body the model stage checked).
func FuzzViewIsTheParsedEnvelope(f *testing.F) {
	for _, s := range awkward {
		f.Add(s, "stop", "call_1", int64(1700000000), int64(0), true)
	}
	f.Add("hello", "", "", int64(-1), int64(5), false)
	f.Fuzz(func(t *testing.T, text, reason, call string, created, completed int64, done bool) {
		status := ResultInProgress
		if done {
			status = ResultCompleted
		}
		echo := append(guestjson.AppendString([]byte(`{"k":`), reason), '}')
		in := ResultInput{Endpoint: EndpointResponses, ID: "resp_" + call, MessageID: call, Created: created, Completed: completed,
			SessionID: text, RunID: reason, Model: "service", Status: status, Echo: echo,
			Result: native.Result{Text: text, FinishReason: reason, Reasoning: text, Usage: native.Usage{InputTokens: len(text)}}}
		if call != "" {
			in.Result.ToolCalls = []native.ToolCall{{ID: call, Name: reason, Arguments: text}}
		}
		want, err := ViewResultInput(in.AppendJSON(nil))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := in.View(nil); got != want {
			t.Fatalf("result view:\n got %+v\nwant %+v", got, want)
		}
		req := RequestInput{Endpoint: EndpointChat, TenantID: text, Actor: Actor{ID: call, Type: "user", Name: reason}, Body: echo}
		wantReq, err := ViewRequestInput(req.AppendJSON(nil))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := req.View(nil); got != wantReq {
			t.Fatalf("request view:\n got %+v\nwant %+v", got, wantReq)
		}
	})
}
