package compat

import (
	"strconv"
	"strings"
	"testing"

	"github.com/runedge/runedge/bench/mockupstream"
	"github.com/runedge/runedge/internal/cputime"
	"github.com/runedge/runedge/internal/jsondepth"
	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/guestjson"
)

// Bodies as clients send them: a one-line question (~100 B) and a longer
// conversation with a schema (~7 KB), the sizes the wasm measurements used.
var (
	smallChatBody      = `{"model":"service","messages":[{"role":"user","content":"Say hello in one short sentence, please."}]}`
	smallResponsesBody = `{"model":"service","input":"Say hello in one short sentence, please.","instructions":"Be brief."}`
	largeChatBody      = largeBody(EndpointChat)
	largeResponsesBody = largeBody(EndpointResponses)
)

// largeBody builds a ~7 KB multi-turn body with escaped text and a schema.
func largeBody(endpoint string) string {
	para := `Our order #` + "%d" + ` arrived late.\nThe \"express\" option was chosen, yet it took 9 days; ` +
		`please explain what happened and what you will do about it — café staff said to write here. `
	var b strings.Builder
	b.WriteString(`{"model":"service",`)
	list := "messages"
	if endpoint == EndpointResponses {
		list = "input"
		b.WriteString(`"instructions":"You are a support agent. Answer politely and precisely.",`)
	} else {
		b.WriteString(`"messages":[{"role":"system","content":"You are a support agent. Answer politely and precisely."},`)
	}
	if list == "input" {
		b.WriteString(`"input":[`)
	}
	for i := range 20 {
		if i > 0 || list == "messages" && i > 0 {
			b.WriteByte(',')
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		text := strings.Repeat(strings.Replace(para, "%d", strconv.Itoa(i), 1), 1)
		if list == "input" {
			part := "input_text"
			if role == "assistant" {
				part = "output_text"
			}
			b.WriteString(`{"role":"` + role + `","content":[{"type":"` + part + `","text":"` + text + `"},{"type":"` + part + `","text":"` + text + `"}]}`)
		} else {
			b.WriteString(`{"role":"` + role + `","content":[{"type":"text","text":"` + text + `"},{"type":"text","text":"` + text + `"}]}`)
		}
	}
	b.WriteString(`],`)
	schema := `{"type":"object","properties":{"answer":{"type":"string"},"refund":{"type":"boolean"},"days":{"type":"integer"}},"required":["answer","refund","days"],"additionalProperties":false}`
	if endpoint == EndpointResponses {
		b.WriteString(`"text":{"format":{"type":"json_schema","name":"reply","strict":true,"schema":` + schema + `}},"metadata":{"ticket":"T-1"},"temperature":0.2,"stream":true}`)
	} else {
		b.WriteString(`"response_format":{"type":"json_schema","json_schema":{"name":"reply","strict":true,"schema":` + schema + `}},"temperature":0.2,"stream":true,"stream_options":{"include_usage":true}}`)
	}
	return b.String()
}

func benchMapRequest(b *testing.B, endpoint, body string) {
	in := envelope(endpoint, body)
	if _, err := MapRequest(in); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MapRequest(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMapRequestChat(b *testing.B) {
	b.Run("small", func(b *testing.B) { benchMapRequest(b, EndpointChat, smallChatBody) })
	b.Run("large", func(b *testing.B) { benchMapRequest(b, EndpointChat, largeChatBody) })
}

func BenchmarkMapRequestResponses(b *testing.B) {
	b.Run("small", func(b *testing.B) { benchMapRequest(b, EndpointResponses, smallResponsesBody) })
	b.Run("large", func(b *testing.B) { benchMapRequest(b, EndpointResponses, largeResponsesBody) })
}

func benchMapResult(b *testing.B, file string) {
	in := []byte(strings.TrimSpace(string(mustRead(b, file))))
	if _, err := MapResult(in); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MapResult(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMapResultChat(b *testing.B) { benchMapResult(b, "testdata/result/chat_completed.json") }

func BenchmarkMapResultResponses(b *testing.B) {
	benchMapResult(b, "testdata/result/responses_completed.json")
}

func BenchmarkMapResultResponsesInProgress(b *testing.B) {
	benchMapResult(b, "testdata/result/responses_in_progress.json")
}

func BenchmarkAppendJSONString(b *testing.B) {
	text := strings.Repeat(`Plain words with a "quote", a newline\n and café. `, 20)
	buf := make([]byte, 0, 2*len(text))
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		buf = guestjson.AppendString(buf[:0], text)
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
