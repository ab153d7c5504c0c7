//go:build !wasip1

package compat

import (
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/plugins/abi"
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
