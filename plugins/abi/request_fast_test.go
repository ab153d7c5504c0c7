//go:build !wasip1

package abi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/internal/jsonfast"
	"github.com/runedge/runedge/runner/native"
)

// requestCases are native request objects as mapping plugins write them,
// and shapes the fast path must leave to encoding/json.
var requestCases = []string{
	`{"input":[{"role":"user","content":"hello"}]}`,
	`{"input":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello there runedge"}],"instructions":"x","stream":true,"max_output_tokens":64}`,
	`{"input":[{"role":"user","content":"a\nb \"q\" é \ud83d\ude00"}],"previous_response_id":"resp_1","no_store":true,"background":false}`,
	`{"input":[{"ref":"msg_1","ref_index":2,"role":"","content":""},{"role":"tool","content":"42","tool_call_id":"call_1","tool_calls":[]}]}`,
	`{"input":[{"role":"user","content":"x"}],"json_object":true,"schema_name":"s"}`,
	`{"input":[{"role":"user","content":"x"}],"max_tool_calls":2,"upstream":{"reasoning_effort":"low","prompt_cache_key":"k","safety_identifier":"s","service_tier":"flex","user":"u"}}`,
	`{"input":[{"role":"user","content":"x"}],"upstream":null}`,
	`{"input":[{"role":"user","content":"x"}],"upstream":{"user":5}}`,
	`{"input":[{"role":"user","content":"x"}],"upstream":{"USER":"u","other":1}}`,
	`{"input":[{"role":"user","content":"x"}],"output_schema":{"type":"object"},"schema_name":"s"}`,
	`{"input":[{"role":"user","content":"x"}],"output_schema":{ "type" : "object", "properties":{"a":{"type":"string"}}}}`,
	`{"input":[{"role":"user","content":"x"}],"output_schema":null}`,
	`{"input":[{"role":"user","content":"x"}],"output_schema":[1]}`,
	`{"input":[{"role":"user","content":"x"}],"output_schema":{},"output_schema":{"a":1}}`,
	`{"input":[{"role":"assistant","content":"","tool_calls":[{"id":"c","name":"f","arguments":"{}"}]}],"tools":[{"name":"f"}],"tool_choice":"auto"}`,
	`{"input":[{"role":"user","content":"x"}],"tool_choice":{"name":"f"},"parallel_tool_calls":false}`,
	`{"input":[{"role":"user","content":"x"}],"Stream":true}`,
	`{"input":[{"role":"user","content":"x","ROLE":"y"}]}`,
	`{"input":[{"role":"user","content":"x"}],"stream":true,"stream":false}`,
	`{"input":[{"role":"user","content":"x"}],"str\u0065am":true}`,
	`{"input":[{"role":"user","content":7}]}`,
	`{"input":[{"role":"user","content":"x"}],"stream":1}`,
	`{"input":[{"role":"user","content":"x"}],"max_output_tokens":1.5}`,
	`{"input":[{"role":"user","content":"x"}],"max_output_tokens":"5"}`,
	`{"input":[null,{"role":"user","content":"x"}]}`,
	`{"input":{"role":"user"}}`,
	"{\"input\":[{\"role\":\"user\",\"content\":\"bad \xff\"}]}",
	`{"input":[{"role":"user","content":"lone \ud800"}]}`,
	`{"input":null}`, `{"input":[]}`, `{}`,
	`{"input":[{"role":"user","content":"x"}],"instructions":null,"extra":{"a":[1,2]}}`,
	`{"input":[{"role":"user","content":"x"}],"withheld_tools":[{"index":0,"type":"web_search"}]}`,
}

// TestFastRequestNamesEveryField: every member of native.Request (and of
// its messages and upstream settings) is one the fast path reads or hands
// to encoding/json; a member it does not name would be skipped as unknown.
func TestFastRequestNamesEveryField(t *testing.T) {
	for _, c := range []struct {
		typ   reflect.Type
		names []string
	}{{reflect.TypeFor[native.Request](), requestNames}, {reflect.TypeFor[native.Message](), messageNames}, {reflect.TypeFor[native.Upstream](), upstreamNames}} {
		for i := range c.typ.NumField() {
			if !c.typ.Field(i).IsExported() { // not in the JSON form
				continue
			}
			name := strings.Split(c.typ.Field(i).Tag.Get("json"), ",")[0]
			if !slices.Contains(c.names, name) {
				t.Errorf("%s.%s (%q) is not among the fast path's names", c.typ.Name(), c.typ.Field(i).Name, name)
			}
		}
	}
}

// TestDecodeRequestOutputMatchesJSON: the fast path decodes what
// encoding/json decodes, and refuses what it refuses.
func TestDecodeRequestOutputMatchesJSON(t *testing.T) {
	for _, s := range requestCases {
		checkRequestOutput(t, []byte(`{"request":`+s+`,"echo":{"a":1}}`))
	}
	// The top level read as gjson reads it: echo before, null, spaced,
	// absent; a key given twice or escaped.
	for _, out := range []string{`{"echo": { "a" : [1, 2] } ,"request":` + requestCases[0] + `}`,
		`{"request":` + requestCases[0] + `,"echo":null}`, `{"request":` + requestCases[0] + `}`,
		`{"request":` + requestCases[0] + `,"request":` + requestCases[1] + `,"echo":1,"echo":2}`,
		`{"requ\u0065st":` + requestCases[0] + `,"request":` + requestCases[1] + `}`,
		`{"Request":` + requestCases[0] + `,"request":` + requestCases[1] + `}`,
		`{"other":[{"request":1}],"request":` + requestCases[0] + `}`, `[]`, `{"request":[]}`} {
		checkRequestOutput(t, []byte(out))
	}
	for _, s := range requestCases[:6] {
		if !fastRequest(jsonfast.Doc(s), new(native.Request)) {
			t.Errorf("not on the fast path: %s", s)
		}
	}
}

func FuzzDecodeRequestOutput(f *testing.F) {
	for _, s := range requestCases {
		f.Add([]byte(`{"request":` + s + `}`))
	}
	f.Fuzz(func(t *testing.T, out []byte) { checkRequestOutput(t, out) })
}

func checkRequestOutput(t *testing.T, out []byte) {
	t.Helper()
	got, err := DecodeRequestOutput(out)
	want, wantErr := referenceDecodeRequestOutput(out)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: error %v, encoding/json says %v", out, err, wantErr)
	}
	if err == nil {
		// A text read with its literal reads the same from the literal.
		for _, m := range got.Request.Input {
			if lit, ok := m.ContentJSON(); ok {
				var s string
				if json.Unmarshal([]byte(lit), &s) != nil || s != m.Content || !utf8.ValidString(lit) {
					t.Fatalf("%q: content %q with the literal %s", out, m.Content, lit)
				}
			}
		}
	}
	if err == nil && !reflect.DeepEqual(normRequest(got.Request), normRequest(want.Request)) {
		t.Fatalf("%q:\n got %+v\nwant %+v", out, got.Request, want.Request)
	}
	if err == nil && !bytes.Equal(got.Echo, want.Echo) {
		t.Fatalf("%q: echo %s, want %s", out, got.Echo, want.Echo)
	}
}

// referenceDecodeRequestOutput is DecodeRequestOutput with encoding/json
// for the request, as it was.
func referenceDecodeRequestOutput(out []byte) (RequestOutput, error) {
	var o RequestOutput
	if !gjson.ValidBytes(out) {
		return o, errNotObject
	}
	req := gjson.GetBytes(out, "request")
	if !req.IsObject() {
		return o, errNotObject
	}
	if err := json.Unmarshal([]byte(req.Raw), &o.Request); err != nil {
		return o, err
	}
	if len(o.Request.Input) == 0 {
		return o, errNotObject
	}
	if e := gjson.GetBytes(out, "echo"); e.Exists() {
		o.Echo = compact([]byte(e.Raw))
	}
	return o, nil
}

// normRequest makes empty and nil slices alike and compacts the schema, as
// DecodeRequestOutput does after decoding, and leaves out the texts'
// literals (checked on their own in checkRequestOutput).
func normRequest(r native.Request) native.Request {
	if len(r.OutputSchema) > 0 {
		r.OutputSchema = compact(r.OutputSchema)
	}
	r.Input = slices.Clone(r.Input)
	for i := range r.Input {
		r.Input[i].SetContentJSON("")
		if len(r.Input[i].ToolCalls) == 0 {
			r.Input[i].ToolCalls = nil
		}
	}
	return r
}

func BenchmarkDecodeRequestOutput(b *testing.B) {
	out := []byte(`{"request":` + requestCases[1] + `,"echo":{"stream":false,"include_usage":false}}`)
	for name, decode := range map[string]func([]byte) (RequestOutput, error){
		"fast": DecodeRequestOutput, "encoding-json": referenceDecodeRequestOutput,
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decode(out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDecodedRolesDoNotHoldTheOutput: a request whose texts all have
// escapes keeps no role or text inside the map_request output, so the
// roles do not hold the output (an agent's whole history) until the run
// ends. (The texts' literals, native.Message.ContentJSON, do: that is
// what copies them upstream; RATIONALE.md "Agent-sized bodies".)
func TestDecodedRolesDoNotHoldTheOutput(t *testing.T) {
	out := []byte(`{"request":{"input":[{"role":"system","content":"be\nbrief"},{"role":"user","content":"say \"hi\""},` +
		`{"role":"assistant","content":"hi\tthere"},{"role":"developer","content":"a\\b"}]}}`)
	o, err := DecodeRequestOutput(out)
	if err != nil || len(o.Request.Input) != 4 {
		t.Fatal(o, err)
	}
	lo, hi := uintptr(unsafe.Pointer(&out[0])), uintptr(unsafe.Pointer(&out[len(out)-1]))
	for _, m := range o.Request.Input {
		for _, s := range []string{m.Role, m.Content} {
			if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p >= lo && p <= hi {
				t.Errorf("%q is read in place: it holds the output", s)
			}
		}
	}
}

// TestNativeDecodeOfGarbageFailsTheCall: DecodeNativeRequestOutput
// assumes JSON (the default mapping's own output); given anything else,
// every prefix of an output here, it answers or fails, never panics.
func TestNativeDecodeOfGarbageFailsTheCall(t *testing.T) {
	out := `{"request":{"input":[{"role":"user","content":"a \"b\" \\"},{"role":"assistant","content":"c"}],"instructions":"i","stream":true},"echo":{"k":[1,{"x":"y"}]}}`
	for n := range len(out) {
		DecodeNativeRequestOutput([]byte(out[:n])) // a panic fails the test
	}
	if o, err := DecodeNativeRequestOutput([]byte(out)); err != nil || len(o.Request.Input) != 2 || o.Request.Input[0].Content != `a "b" \` {
		t.Fatalf("%+v, %v", o, err)
	}
}
