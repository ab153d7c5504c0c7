//go:build !wasip1

package compat

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/plugins/abi"
	runnative "github.com/runedge/runedge/runner/native"
)

// FuzzMapRequestOutputIsJSON: for any body the host lets through (JSON,
// as gjson validates it), what the default mapping writes is JSON, and
// the host reads it the same without validating it again
// (abi.DecodeNativeRequestOutput, which the host uses for the default run
// natively) as with (abi.DecodeRequestOutput).
func FuzzMapRequestOutputIsJSON(f *testing.F) {
	for _, s := range []struct {
		chat bool
		body string
	}{
		{true, `{"model":"service","messages":[{"role":"system","content":"Be \"brief\".\n"},{"role":"user","content":"a\u2028\ud800 \xff <&>"}]}`},
		{true, `{"model":"service","messages":[{"role":"user","content":[{"type":"text","text":"x\\"},{"type":"text","text":"\ud83d\ude00"}]}],"stream":true,"stream_options":{"include_usage":true}}`},
		{true, `{"model":"service","messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`},
		{true, `{"model":"service","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"type":"object","properties":{"a":{"type":"string"}}}}}}`},
		{false, `{"model":"service","input":"hi \"there\"","instructions":"be\tbrief"}`},
		{false, `{"model":"service","input":[{"role":"user","content":[{"type":"input_text","text":"a\nb"},{"type":"input_image","image_url":"https://x/y.png"}]},{"type":"item_reference","id":"msg_1"}]}`},
		{false, `{"model":"service","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"ok"}],"tools":[{"type":"function","name":"f"}]}`},
	} {
		f.Add(s.chat, s.body)
	}
	f.Fuzz(func(t *testing.T, chat bool, body string) {
		if !gjson.Valid(body) {
			return
		}
		ep := EndpointResponses
		if chat {
			ep = EndpointChat
		}
		out, err := MapRequest(envelope(ep, body))
		if err != nil {
			return
		}
		if !gjson.ValidBytes(out) || !json.Valid(out) {
			t.Fatalf("%s: output is not JSON: %s", body, out)
		}
		fast, err := abi.DecodeNativeRequestOutput(out)
		checked, errChecked := abi.DecodeRequestOutput(out)
		if (err == nil) != (errChecked == nil) {
			t.Fatalf("%s: native decode %v, checked %v", out, err, errChecked)
		}
		a, _ := json.Marshal(fast)
		b, _ := json.Marshal(checked)
		if string(a) != string(b) {
			t.Fatalf("%s:\nnative  %s\nchecked %s", out, a, b)
		}
	})
}

// FuzzMapResultOutputIsJSON: for any result and any echo the default's
// map_request writes, what the default's map_result writes natively
// (MapResultView, as the host calls it) is one JSON object, so the host
// compacts it without validating it (abi.CompactResult, which gives what
// abi.NormalizeResult gives).
func FuzzMapResultOutputIsJSON(f *testing.F) {
	f.Add(true, false, `{"model":"service","messages":[{"role":"user","content":"hi"}]}`, "Hello \"there\"\n\u2028", "", "stop", "", "", "", false, 3)
	f.Add(true, false, `{"model":"service","messages":[{"role":"user","content":"q"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`, "", "", "tool_calls", "c1", "f", `{"a": [1, 2]}`, false, 0)
	f.Add(false, false, `{"model":"service","input":"hi","metadata":{"k":"v"},"instructions":"be\tbrief"}`, "a\x00b\xff", "think\r\n", "stop", "", "", "", false, 7)
	f.Add(false, true, `{"model":"service","input":"hi","text":{"format":{"type":"json_schema","name":"p","schema":{"type":"object"}}}}`, "", "", "", "", "", "", false, 0)
	f.Add(false, false, `{"model":"service","input":"x","tools":[{"type":"custom","name":"g"}]}`, "", "", "tool_calls", "c2", "g", "free\nform <&>", true, 1)
	f.Fuzz(func(t *testing.T, chat, inProgress bool, body, text, reasoning, finish, callID, name, args string, custom bool, tokens int) {
		if !gjson.Valid(body) {
			return
		}
		ep := EndpointResponses
		if chat {
			ep = EndpointChat
		}
		mapped, err := MapRequest(envelope(ep, body))
		if err != nil {
			return
		}
		in := abi.ResultInput{Endpoint: ep, ID: "resp_1", MessageID: "msg_1", Created: 1735689600, SessionID: "ses_1",
			RunID: "run_1", Model: "service", Status: abi.ResultCompleted, Echo: []byte(gjson.GetBytes(mapped, "echo").Raw)}
		if chat {
			in.ID = "chatcmpl-1"
		}
		if inProgress {
			in.Status = abi.ResultInProgress
		} else {
			in.Completed = 1735689601
			in.Result = runnative.Result{Text: text, Reasoning: reasoning, FinishReason: finish,
				Usage: runnative.Usage{InputTokens: tokens, OutputTokens: tokens, TotalTokens: 2 * tokens, ReasoningTokens: tokens}}
			if callID != "" || name != "" {
				in.Result.ToolCalls = []runnative.ToolCall{{ID: callID, Name: name, Arguments: args, Custom: custom}}
			}
		}
		v, _ := in.View(nil)
		out, err := MapResultView(v)
		if err != nil {
			return
		}
		if len(out) == 0 || out[0] != '{' || !json.Valid(out) {
			t.Fatalf("output is not one JSON object: %s", out)
		}
		compacted, err := abi.CompactResult(bytes.Clone(out))
		normalized, errN := abi.NormalizeResult(bytes.Clone(out))
		if err != nil || errN != nil || !bytes.Equal(compacted, normalized) {
			t.Fatalf("CompactResult %s (%v), NormalizeResult %s (%v)", compacted, err, normalized, errN)
		}
	})
}
