//go:build !wasip1

package compat

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/bench/mockupstream"
	"github.com/runedge/runedge/internal/cputime"
	"github.com/runedge/runedge/internal/jsondepth"
	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/guestjson"
	nativewire "github.com/runedge/runedge/runner/native"
)

// decodedSeeds are chat bodies MapRequestDecoded takes (text histories,
// with every escape class, options beside them) and some it declines.
var decodedSeeds = []string{
	`{"model":"service","messages":[{"role":"user","content":"a \" c\n<x> & \t\b\f"},{"role":"assistant","content":"x\r\n"}]}`,
	`{"model":"service","messages":[{"role":"user","content":"a \\ b \" c\n<x> & \\\\ \t\b\f"},{"role":"assistant","content":"plain"},{"role":"user","content":"\\"}]}`,
	`{"model":"service","messages":[{"role":"system","content":"Be \"brief\".\n"},{"role":"user","content":"a\u2028\ud800 <&> \u003c\/"}]}`,
	`{"model":"service","messages":[{"role":"developer","content":"x"},{"role":"user","content":"\ud83d\ude00 é\t"},{"role":"assistant","content":"ok","tool_calls":[]}],"stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":64}`,
	`{"model":"service","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"type":"object","properties":{"a":{"type":"string"}}}}}}`,
	`{"model":"service","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"required"}`,
	`{"model":"service","messages":[{"role":"user","content":"bad ` + "\xff" + ` byte"}]}`,
	`{"model":"service","messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`,
	`{"model":"service","messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`,
	`{"model":"service","messages":[{"role":"user","content":"x"}],"n":2}`,
	`{"model":"service","messages":[]}`,
	`{"model":"service","messages":[{"role":"wizard","content":"x"}]}`,
	// Member names and roles written with escapes: read, not compared as
	// written (textFields.member, roleAsWritten).
	`{"model":"service","messages":[{"r\u006fle":"\u0075ser","c\u006fntent":"x"},{"role":"assist\u0061nt","content":"y"}]}`,
	`{"model":"service","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"y","tool\u005fcalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`,
	`{"model":"service","messages":[{"role":"t\u006fol","tool_call_id":"c1","content":"r"}]}`,
	`{"model":"service","messages":[{"role":"user","content":"` + strings.Repeat(`a \"b\"\n`, 12) + `"},{"role":"assistant","content":"` + strings.Repeat("c", 62) + `","x":"` + strings.Repeat(`\"`, 40) + `"}],"user":"` + strings.Repeat("u", 70) + `"}`,
}

// decodedResponsesSeeds are decodedSeeds for Responses.
var decodedResponsesSeeds = []string{
	`{"model":"service","input":[{"role":"developer","content":"Be \"brief\".\n"},{"type":"message","role":"user","content":"a\u2028\ud800 <&> \u003c\/"}],"instructions":"be\tbrief","store":false}`,
	`{"model":"service","input":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}],"stream":true,"max_output_tokens":64,"metadata":{"a":"b"}}`,
	`{"model":"service","input":[{"role":"user","content":"x"}],"text":{"format":{"type":"json_schema","name":"p","schema":{"type":"object"}}}}`,
	`{"model":"service","input":[{"role":"user","content":"x"}],"tools":[{"type":"function","name":"f"}]}`,
	`{"model":"service","input":"hi"}`,
	`{"model":"service","input":[{"role":"assistant","content":"x","phase":"commentary"}]}`,
	`{"model":"service","input":[{"role":"user","content":[{"type":"input_text","text":"x"}]}]}`,
	`{"model":"service","input":[{"type":"item_reference","id":"msg_1"}]}`,
	`{"model":"service","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"ok"}]}`,
	`{"model":"service","input":[{"role":"tool","content":"x"}]}`,
	`{"model":"service","input":[]}`,
	`{"model":"service","input":[{"role":"user","content":"x"}],"temperature":"hot"}`,
	`{"model":"service","input":[{"r\u006fle":"\u0075ser","c\u006fntent":"x","typ\u0065":"message"}]}`,
	`{"model":"service","input":[{"role":"assistant","content":"x","ph\u0061se":"commentary"}]}`,
	`{"model":"service","input":[{"role":"user","content":"` + strings.Repeat(`a \"b\"\n`, 12) + `"},{"type":"message","role":"assistant","content":"` + strings.Repeat("c", 62) + `"}],"instructions":"` + strings.Repeat("i", 70) + `"}`,
}

// FuzzMapRequestDecoded: wherever MapRequestDecoded takes a body, it gives
// the request that MapRequestView and the host's decoder give: the same
// fields, and each text with the same literal on the same terms (what the
// upstream body and the recorded request are written from: the same
// bytes, by construction).
func FuzzMapRequestDecoded(f *testing.F) {
	for _, s := range decodedSeeds {
		f.Add(true, s)
	}
	for _, s := range decodedResponsesSeeds {
		f.Add(false, s)
	}
	f.Fuzz(func(t *testing.T, chat bool, body string) {
		if !gjson.Valid(body) {
			return
		}
		ep := EndpointResponses
		if chat {
			ep = EndpointChat
		}
		checkDecoded(t, ep, body)
	})
}

// checkDecoded compares the two paths on body and reports whether
// MapRequestDecoded took it.
func checkDecoded(t *testing.T, endpoint, body string) bool {
	t.Helper()
	v, err := abi.ViewRequestInput(envelope(endpoint, body))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := MapRequestDecoded(v)
	// Told where the body's long strings end (the model stage's
	// jsondepth.ValidPlainEnds), it takes the same bodies and gives the
	// same request, without reading those strings for their ends.
	if valid, plain, ends := jsondepth.ValidPlainEnds(v.Body.Bytes(), 128, nil, nil); valid {
		ev := v
		ev.PlainStrings = plain
		ev.StringEnds = guestjson.NewStringEnds(v.Body.Bytes(), ends)
		egot, eok := MapRequestDecoded(ev)
		pv := v
		pv.PlainStrings = plain
		pgot, _ := MapRequestDecoded(pv)
		if eok != ok || !reflect.DeepEqual(egot, pgot) {
			t.Fatalf("%s: with the strings' ends %v, taken %v\n%+v\nwithout them, taken %v\n%+v", body, ends, eok, egot, ok, pgot)
		}
	}
	if !ok {
		return false
	}
	// Told that every string of the body is plain (the model stage's
	// jsondepth.ValidPlain), it keeps the same texts pending, with the
	// same lengths and forms, without reading them.
	if valid, plain := jsondepth.ValidPlain([]byte(body), 128, nil); valid && plain {
		pv := v
		pv.PlainStrings = true
		pgot, pok := MapRequestDecoded(pv)
		if !pok || len(pgot.Request.Input) != len(got.Request.Input) {
			t.Fatalf("%s: plain, taken %v with %d messages, want %d", body, pok, len(pgot.Request.Input), len(got.Request.Input))
		}
		for i := range pgot.Request.Input {
			p, g := &pgot.Request.Input[i], &got.Request.Input[i]
			pl, plok := p.ContentJSON()
			gl, glok := g.ContentJSON()
			pm, pmok := p.ContentMarshaled()
			gm, gmok := g.ContentMarshaled()
			if p.Role != g.Role || p.Text() != g.Text() || p.TextLen() != g.TextLen() || p.ContentPending() != g.ContentPending() ||
				pl != gl || plok != glok || pm != gm || pmok != gmok {
				t.Errorf("%s: plain, message %d reads %q (%d, pending %v, marshaled %v), want %q (%d, pending %v, marshaled %v)",
					body, i, p.Text(), p.TextLen(), p.ContentPending(), pmok, g.Text(), g.TextLen(), g.ContentPending(), gmok)
			}
		}
	}
	out, err := MapRequestView(v)
	if err != nil {
		t.Fatalf("%s: taken, but MapRequestView refuses it: %v", body, err)
	}
	want, err := abi.DecodeNativeRequestOutput(out)
	if err != nil {
		t.Fatalf("%s: taken, but its output does not decode: %v", body, err)
	}
	if string(got.Echo) != string(want.Echo) {
		t.Errorf("%s: echo %s, want %s", body, got.Echo, want.Echo)
	}
	if len(got.Request.Input) != len(want.Request.Input) {
		t.Fatalf("%s: %d messages, want %d", body, len(got.Request.Input), len(want.Request.Input))
	}
	for i := range got.Request.Input {
		g, w := &got.Request.Input[i], &want.Request.Input[i]
		// A pending text reads as the host decoder's, and decoded is
		// the same message, literal and all.
		if g.Text() != w.Content || g.TextLen() != len(w.Content) {
			t.Errorf("%s: message %d reads %q (%d bytes), want %q", body, i, g.Text(), g.TextLen(), w.Content)
		}
		decoded := *g
		decoded.DecodeContent()
		g = &decoded
		gl, gok := g.ContentJSON()
		wl, wok := w.ContentJSON()
		gm, gmok := g.ContentMarshaled()
		wm, wmok := w.ContentMarshaled()
		if g.Role != w.Role || g.Content != w.Content || gl != wl || gok != wok || gm != wm || gmok != wmok {
			t.Errorf("%s: message %d is %q %q (literal %s %v, marshaled %v), want %q %q (literal %s %v, marshaled %v)",
				body, i, g.Role, g.Content, gl, gok, gmok, w.Role, w.Content, wl, wok, wmok)
		}
		if !sameExported(*g, *w) {
			t.Errorf("%s: message %d is %+v, want %+v", body, i, *g, *w)
		}
	}
	g, w := got.Request, want.Request
	g.Input, w.Input = nil, nil
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s: request %+v, want %+v", body, g, w)
	}
	return true
}

// sameExported compares two messages' exported fields.
func sameExported(a, b nativewire.Message) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		if va.Type().Field(i).IsExported() && !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return false
		}
	}
	return true
}

// TestMapRequestDecoded: the seeds as FuzzMapRequestDecoded checks them,
// the agent histories among them, and which ones the decoded path takes.
func TestMapRequestDecoded(t *testing.T) {
	for _, c := range []struct {
		endpoint string
		seeds    []string
		want     int
	}{{EndpointChat, decodedSeeds, 8}, {EndpointResponses, decodedResponsesSeeds, 6}} {
		taken := 0
		for _, s := range c.seeds {
			if checkDecoded(t, c.endpoint, s) {
				taken++
			}
		}
		if taken != c.want {
			t.Errorf("%s: %d of the seeds taken, want %d", c.endpoint, taken, c.want)
		}
	}
	chat := string(mockupstream.AgentChat("service", false))
	if !checkDecoded(t, EndpointChat, chat) {
		t.Error("the agent's chat history is not taken")
	}
	if checkDecoded(t, EndpointChat, strings.Replace(chat, `"role":"user"`, `"role":"tool"`, 1)) {
		t.Error("a tool message is taken")
	}
	input := string(mockupstream.AgentInput("service", false))
	if !checkDecoded(t, EndpointResponses, input) {
		t.Error("the agent's Responses input is not taken")
	}
	if checkDecoded(t, EndpointResponses, strings.Replace(input, `"type":"message"`, `"type":"reasoning"`, 1)) {
		t.Error("a reasoning item is taken")
	}
}

// BenchmarkMapRequestDecodedAgent is the host's mapping of an agent-sized
// chat completion (a 400-message, 229 KB history of code and prose with
// escapes): one walk of the messages and each text unescaped.
func BenchmarkMapRequestDecodedAgent(b *testing.B) {
	v, err := abi.ViewRequestInput(envelope(EndpointChat, string(mockupstream.AgentChat("service", false))))
	if err != nil {
		b.Fatal(err)
	}
	// plain: told that every string is plain (the model stage's
	// jsondepth.ValidPlain, as the agent history's strings are); ends:
	// and where its long strings end (jsondepth.ValidPlainEnds).
	_, _, ends := jsondepth.ValidPlainEnds(v.Body.Bytes(), 64, nil, nil)
	for _, c := range []struct {
		name        string
		plain, ends bool
	}{{"read", false, false}, {"plain", true, false}, {"ends", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			v := v
			v.PlainStrings = c.plain
			if c.ends {
				v.StringEnds = guestjson.NewStringEnds(v.Body.Bytes(), ends)
			}
			b.SetBytes(int64(len(v.Body)))
			b.ReportAllocs()
			cpu0 := cputime.Process()
			for b.Loop() {
				if o, ok := MapRequestDecoded(v); !ok || len(o.Request.Input) != mockupstream.AgentMessages {
					b.Fatal(ok, len(o.Request.Input))
				}
			}
			b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
