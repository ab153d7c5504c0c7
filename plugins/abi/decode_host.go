//go:build !wasip1

package abi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/internal/jsonfast"
	"github.com/runedge/runedge/runner/native"
)

// The host's readers of guest outputs. They use gjson, which a guest does
// not need: built for wasip1, the package leaves them out, and with them
// gjson, whose modifiers link encoding/json's reflection into every guest
// (a quarter of a default plugin's code; see RATIONALE.md, "Peak RSS").

// DecodeInputError reads a status-1 body, filling in the default code.
func DecodeInputError(body []byte) (InputError, error) {
	if !gjson.ValidBytes(body) {
		return InputError{}, errors.New("status 1 with a malformed error body: not JSON")
	}
	e := gjson.GetBytes(body, "error")
	if !e.IsObject() {
		return InputError{}, errors.New(`status 1 without "error.message" in its body`)
	}
	var ie InputError
	for _, f := range []struct {
		dst  *string
		name string
	}{{&ie.Message, "message"}, {&ie.Param, "param"}, {&ie.Code, "code"}} {
		v := e.Get(f.name)
		switch v.Type {
		case gjson.String:
			*f.dst = v.Str
		case gjson.Null:
		default:
			if v.Exists() {
				return InputError{}, fmt.Errorf("status 1 with a malformed error body: error.%s is not a string", f.name)
			}
		}
	}
	if ie.Message == "" {
		return InputError{}, errors.New(`status 1 without "error.message" in its body`)
	}
	if ie.Code == "" {
		ie.Code = DefaultInputErrorCode
	}
	return ie, nil
}

// DecodeRequestOutput reads a map_request output on the host. It refuses
// what the run cannot use: no request object, a request that does not
// decode into the native form, no input messages. The echo is compacted.
//
// The request's strings may share out's memory, which is read in place
// (an agent-sized request's 230 KB were copied once more to be decoded):
// out must not change after the call.
func DecodeRequestOutput(out []byte) (RequestOutput, error) {
	if !gjson.ValidBytes(out) {
		return RequestOutput{}, errors.New("its output is not JSON")
	}
	return decodeRequestOutput(out)
}

// DecodeNativeRequestOutput is DecodeRequestOutput for an output the
// built-in default mapping (plugins/compat, run natively) wrote in this
// process: JSON by construction from a body the host validated, so it is
// not validated again (a quarter of this stage's CPU on an agent's 229 KB
// history; RATIONALE.md, "Agent-sized bodies"). compat's tests check
// every output they map is JSON, and FuzzMapRequestOutputIsJSON any
// body's. A plugin's output, from WebAssembly, goes through
// DecodeRequestOutput. Should the default ever write something else, the
// walk, which assumes JSON, fails this call (a 500 naming the plugin), not
// the process.
func DecodeNativeRequestOutput(out []byte) (o RequestOutput, err error) {
	defer func() {
		if recover() != nil {
			o, err = RequestOutput{}, errors.New("its output is not JSON")
		}
	}()
	return decodeRequestOutput(out)
}

func decodeRequestOutput(out []byte) (RequestOutput, error) {
	doc := unsafe.String(unsafe.SliceData(out), len(out))
	// One walk of the top level finds both members; gjson, which found
	// each in a walk of its own, where that walk could read otherwise.
	var req, echo jsonfast.Value
	var hasEcho bool
	top := jsonfast.Doc(doc)
	if !top.IsObject() || !jsonfast.Members(top, outputNames, func(i int, v jsonfast.Value) bool {
		if i == 0 {
			req = v
		} else {
			echo, hasEcho = v, true
		}
		return true
	}) {
		req = jsonfast.Value(gjson.Get(doc, "request").Raw)
		e := gjson.Get(doc, "echo")
		echo, hasEcho = jsonfast.Value(e.Raw), e.Exists()
	}
	if !req.IsObject() {
		return RequestOutput{}, errors.New("its output has no request object")
	}
	var o RequestOutput
	if !fastRequest(req, &o.Request) {
		o.Request = native.Request{}
		if err := json.Unmarshal([]byte(req), &o.Request); err != nil {
			return RequestOutput{}, fmt.Errorf("its request object does not decode: %w", err)
		}
	}
	if len(o.Request.Input) == 0 {
		return RequestOutput{}, errors.New("its request has no input messages")
	}
	if len(o.Request.OutputSchema) > 0 {
		o.Request.OutputSchema = compact(o.Request.OutputSchema)
	}
	if hasEcho {
		o.Echo = compact([]byte(echo))
	}
	return o, nil
}

// outputNames are the members of a map_request output the host reads.
var outputNames = []string{"request", "echo"}

// compact returns valid JSON raw without insignificant white space.
func compact(raw []byte) []byte {
	if !bytes.ContainsAny(raw, " \t\r\n") {
		return raw
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// DecodeStreamOutput reads a map_stream output on the host: emit must be a
// string, hold a string or absent.
func DecodeStreamOutput(out []byte) (StreamOutput, error) {
	if !gjson.ValidBytes(out) {
		return StreamOutput{}, errors.New("output needs string fields emit and hold")
	}
	e, h := gjson.GetBytes(out, "emit"), gjson.GetBytes(out, "hold")
	if e.Type != gjson.String || (h.Exists() && h.Type != gjson.String) {
		return StreamOutput{}, errors.New("output needs string fields emit and hold")
	}
	return StreamOutput{Emit: e.Str, Hold: h.Str}, nil
}

// The native request's members as encoding/json names them; fastRequest
// reads the plain ones and leaves the rest (a schema, tools) to
// encoding/json, which reading every request with cost about 10 µs. Every
// member of native.Request must be named here (TestFastRequestNamesEveryField):
// one left out is skipped as unknown, as withheld_tools once was, which
// made tools.hosted: refuse let a request offering only hosted tools through.
var (
	requestNames = []string{"input", "instructions", "schema_name", "json_object", "stream", "max_output_tokens",
		"previous_response_id", "no_store", "background",
		"output_schema", "tools", "tool_choice", "parallel_tool_calls", "max_tool_calls", "upstream",
		"withheld_tools"}
	messageNames  = []string{"role", "content", "ref", "ref_index", "tool_call_id", "tool_calls", "phase", "parts", "reasoning"}
	upstreamNames = []string{"reasoning_effort", "prompt_cache_key", "safety_identifier", "service_tier", "user"}
)

// fastRequest decodes a native request as json.Unmarshal would, or reports
// false when it cannot be sure (jsonfast); r may then hold part of it.
func fastRequest(v jsonfast.Value, r *native.Request) bool {
	return jsonfast.Members(v, requestNames, func(i int, v jsonfast.Value) bool {
		switch i {
		case 0:
			return jsonfast.Array(v, &r.Input, func(v jsonfast.Value, m *native.Message) bool {
				return jsonfast.Members(v, messageNames, func(i int, v jsonfast.Value) bool {
					switch i {
					case 0:
						ok := jsonfast.String(v, &m.Role)
						m.Role = internRole(m.Role)
						return ok
					case 1:
						// The literal, when copyable, goes upstream as
						// it is (native.Message.ContentJSON), and into
						// the recorded request when it is json.Marshal's
						// form: an agent's history copied, not escaped
						// again.
						lit, marshaled, ok := jsonfast.StringLiteralMarshaled(v, &m.Content)
						m.SetContentJSONMarshaled(lit, marshaled)
						return ok
					case 2:
						return jsonfast.String(v, &m.Ref)
					case 3:
						return jsonfast.Int(v, &m.RefIndex)
					case 4:
						return jsonfast.String(v, &m.ToolCallID)
					case 6:
						return jsonfast.String(v, &m.Phase)
					}
					return jsonfast.Empty(v) // tool calls, parts, reasoning: encoding/json
				})
			})
		case 1:
			return jsonfast.String(v, &r.Instructions)
		case 2:
			return jsonfast.String(v, &r.SchemaName)
		case 3:
			return jsonfast.Bool(v, &r.JSONObject)
		case 4:
			return jsonfast.Bool(v, &r.Stream)
		case 5:
			return jsonfast.Int(v, &r.MaxOutputTokens)
		case 6:
			return jsonfast.String(v, &r.PreviousResponseID)
		case 7:
			return jsonfast.Bool(v, &r.NoStore)
		case 8:
			return jsonfast.Bool(v, &r.Background)
		case 9:
			// A json.RawMessage takes the value's bytes as they are; the
			// document was validated, so an object needs no decoding (it
			// was read twice, about 10 µs for a small schema).
			if !v.IsObject() {
				return false
			}
			r.OutputSchema = append(r.OutputSchema[:0], v...)
			return true
		case 13:
			return jsonfast.Int(v, &r.MaxToolCalls)
		case 14:
			u := &r.Upstream
			return jsonfast.Object(v, func(v jsonfast.Value) bool {
				return jsonfast.Members(v, upstreamNames, func(i int, v jsonfast.Value) bool {
					return jsonfast.String(v, [...]*string{&u.ReasoningEffort, &u.PromptCacheKey,
						&u.SafetyIdentifier, &u.ServiceTier, &u.User}[i])
				})
			})
		}
		return false // tools, withheld_tools: encoding/json
	})
}

// internRole returns role as a constant when it is one of the roles the
// mappings write. The request's strings are read in place, so each role,
// a few bytes, would hold the whole map_request output (an agent's 230 KB
// history) until the run ends, though every text with an escape in it is
// a copy of its own.
func internRole(role string) string {
	for _, r := range [...]string{"user", "assistant", "system", "developer", "tool", "reasoning"} {
		if role == r {
			return r
		}
	}
	return role
}

// NormalizeResult checks a map_result output on the host and returns it
// compacted: it must be one JSON object. A plugin may indent its output, but
// the host frames it in SSE data lines, which end at the first newline, so
// white space between tokens is removed (never inside strings).
//
// Plugins that return compact JSON, as the default ones do, pay for a
// validity check and a scan for white space only: json.Compact's scanner
// took about 15 µs on a 900-byte chat.completion.
func NormalizeResult(out []byte) ([]byte, error) {
	if len(out) > 0 && out[0] == '{' && isCompact(out) && gjson.ValidBytes(out) {
		return out, nil
	}
	var b bytes.Buffer
	b.Grow(len(out))
	if err := compactInto(&b, out); err != nil {
		return nil, errors.New("output is not JSON: " + err.Error())
	}
	if c := b.Bytes(); len(c) == 0 || c[0] != '{' {
		return nil, errors.New("output is not a JSON object")
	}
	return b.Bytes(), nil
}

// CompactResult is NormalizeResult for an output that is one JSON object
// by construction (runtime.NativeHooks.MapResultJSON: the built-in
// default's, which FuzzMapResultOutputIsJSON holds to it): white space
// is still taken out, so that an SSE data line cannot end early, but a
// compact output is not validated again (gjson's check was about 6,000
// instructions of a small reply's ~400,000).
func CompactResult(out []byte) ([]byte, error) {
	if len(out) > 0 && out[0] == '{' && isCompact(out) {
		return out, nil
	}
	return NormalizeResult(out)
}

// isCompact reports whether raw has no white space outside its strings
// (raw is not checked to be JSON here).
func isCompact(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		case ' ', '\t', '\n', '\r':
			return false
		}
	}
	return true
}

// compactInto appends raw to b without insignificant white space, checking
// that raw is one JSON value: encoding/json's Compact does both in one pass.
func compactInto(b *bytes.Buffer, raw []byte) error {
	return json.Compact(b, raw)
}
