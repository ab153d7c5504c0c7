// Package nativereq is the request stage of POST /runner/v1/runs: the body
// is the native run request itself (runner/native.Request's fields, plus the
// session and thread to continue), so instead of model and map-request this
// stage checks its shape and puts it on the exchange for the run stage.
//
// The native API is runedge's own, so it is strict where the compatible
// endpoints are lenient: a field it does not know is refused (400
// invalid_body naming it) rather than ignored, so that a misspelt
// "sesion_id" cannot start a run in a new session.
package nativereq

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/internal/jsondepth"
	"github.com/runedge/runedge/runner"
)

// MaxBodyDepth bounds how deeply the body nests, checked on the bytes
// before anything decodes it: an output schema may nest 64 levels of its
// own (runner/schema), a few levels into the body.
const MaxBodyDepth = 128

// maxIDLen bounds session_id and thread_id, as the run stage bounds their
// headers.
const maxIDLen = 128

// Request is the stage.
type Request struct{}

var _ filters.Stage = Request{}

// New builds the stage; it has no configuration.
func New() Request { return Request{} }

// Name implements filters.Stage.
func (Request) Name() string { return contract.StageNativeRequest }

// Handle implements filters.Stage.
func (Request) Handle(ctx context.Context, x *filters.Exchange, next filters.Handler) error {
	req, err := Parse(x.Body)
	if err != nil {
		return err
	}
	x.Native, x.Stream = req.Request, req.Request.Stream
	x.SessionID, x.ThreadID = req.SessionID, req.ThreadID
	return next.Handle(ctx, x)
}

// Parsed is a checked native run request.
type Parsed struct {
	Request             runner.Request
	SessionID, ThreadID string
}

// Parse checks body and decodes it. Every refusal is a 400 invalid_body
// whose param names the field (input[2].role, tools[0].parameters).
func Parse(body []byte) (Parsed, error) {
	var p Parsed
	if len(body) == 0 {
		return p, apierr.InvalidBody("", "the request body is empty; send a JSON object")
	}
	if jsondepth.Exceeds(body, MaxBodyDepth) >= 0 {
		return p, apierr.InvalidBody("", "the request body nests deeper than the limit of %d levels", MaxBodyDepth)
	}
	if !gjson.ValidBytes(body) {
		return p, apierr.InvalidBody("", "the request body is not valid JSON")
	}
	obj := gjson.ParseBytes(body)
	if !obj.IsObject() {
		return p, apierr.InvalidBody("", "the request body must be a JSON object")
	}
	seen := map[string]bool{}
	var err error
	obj.ForEach(func(k, v gjson.Result) bool {
		if seen[k.Str] {
			err = apierr.InvalidBody(k.Str, "the request body has the key %q twice", k.Str)
			return false
		}
		seen[k.Str] = true
		err = p.field(k.Str, v)
		return err == nil
	})
	if err != nil {
		return p, err
	}
	if len(p.Request.Input) == 0 {
		return p, apierr.InvalidBody("input", "input is required: a non-empty array of messages")
	}
	return p, nil
}

// field checks and decodes one member of the body.
func (p *Parsed) field(name string, v gjson.Result) error {
	r := &p.Request
	if v.Type == gjson.Null {
		return nil // null is absent, as in the compatible APIs
	}
	switch name {
	case "input":
		return p.input(v)
	case "instructions":
		return str(name, v, &r.Instructions)
	case "output_schema":
		if !v.IsObject() {
			return apierr.InvalidBody(name, "output_schema must be a JSON Schema object")
		}
		r.OutputSchema = json.RawMessage(v.Raw)
	case "schema_name":
		return str(name, v, &r.SchemaName)
	case "max_output_tokens":
		if v.Type != gjson.Number || v.Num != float64(int64(v.Num)) || v.Num < 1 || v.Num > 1<<31 {
			return apierr.InvalidBody(name, "max_output_tokens must be a positive integer")
		}
		r.MaxOutputTokens = int(v.Int())
	case "stream":
		return boolean(name, v, &r.Stream)
	case "parallel_tool_calls":
		var b bool
		if err := boolean(name, v, &b); err != nil {
			return err
		}
		r.ParallelToolCalls = &b
	case "tool_choice":
		if err := json.Unmarshal([]byte(v.Raw), &r.ToolChoice); err != nil {
			return apierr.InvalidBody(name, "%v", err)
		}
	case "tools":
		return p.tools(v)
	case "session_id":
		return id(name, v, &p.SessionID)
	case "thread_id":
		return id(name, v, &p.ThreadID)
	default:
		return apierr.InvalidBody(name, "unknown field %q; see docs/api.md for the native run request", name)
	}
	return nil
}

// The roles a native message may have.
var roles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true}

func (p *Parsed) input(v gjson.Result) error {
	return each("input", v, "input must be a non-empty array of messages", func(param string, m gjson.Result) error {
		msg, err := message(param, m)
		p.Request.Input = append(p.Request.Input, msg)
		return err
	})
}

// each calls fn on every element of the array v, named param[i]; a v that
// is not an array is refused with msg.
func each(param string, v gjson.Result, msg string, fn func(param string, item gjson.Result) error) error {
	if !v.IsArray() {
		return apierr.InvalidBody(param, "%s", msg)
	}
	var err error
	i := 0
	v.ForEach(func(_, item gjson.Result) bool {
		err = fn(param+"["+strconv.Itoa(i)+"]", item)
		i++
		return err == nil
	})
	return err
}

// message checks one input message: {"role","content"}, an assistant's
// "tool_calls", a tool result's "tool_call_id".
func message(param string, m gjson.Result) (runner.Message, error) {
	var msg runner.Message
	if !m.IsObject() {
		return msg, apierr.InvalidBody(param, "%s must be a message object", param)
	}
	var err error
	m.ForEach(func(k, v gjson.Result) bool {
		f := param + "." + k.Str
		switch k.Str {
		case "role":
			err = str(f, v, &msg.Role)
		case "content":
			err = str(f, v, &msg.Content)
		case "tool_call_id":
			err = str(f, v, &msg.ToolCallID)
		case "tool_calls":
			msg.ToolCalls, err = toolCalls(f, v)
		default:
			err = apierr.InvalidBody(f, "unknown field %q in a message", k.Str)
		}
		return err == nil
	})
	switch {
	case err != nil:
		return msg, err
	case !roles[msg.Role]:
		return msg, apierr.InvalidBody(param+".role", "role must be one of system, developer, user, assistant, tool")
	case msg.Role == "tool" && msg.ToolCallID == "":
		return msg, apierr.InvalidBody(param+".tool_call_id", "a tool message needs the tool_call_id of the call it answers")
	case msg.Role != "tool" && msg.ToolCallID != "":
		return msg, apierr.InvalidBody(param+".tool_call_id", "only a tool message has a tool_call_id")
	case len(msg.ToolCalls) > 0 && msg.Role != "assistant":
		return msg, apierr.InvalidBody(param+".tool_calls", "only an assistant message has tool_calls")
	case msg.Content == "" && len(msg.ToolCalls) == 0:
		return msg, apierr.InvalidBody(param+".content", "content is required: a non-empty string")
	}
	return msg, nil
}

func toolCalls(param string, v gjson.Result) ([]runner.ToolCall, error) {
	var calls []runner.ToolCall
	err := each(param, v, param+" must be an array of {id, name, arguments}", func(f string, c gjson.Result) error {
		var tc runner.ToolCall
		if !c.IsObject() {
			return apierr.InvalidBody(f, "%s must be an object {id, name, arguments}", f)
		}
		for _, m := range []struct {
			name string
			dst  *string
		}{{"id", &tc.ID}, {"name", &tc.Name}, {"arguments", &tc.Arguments}} {
			if err := str(f+"."+m.name, c.Get(m.name), m.dst); err != nil {
				return err
			}
			if *m.dst == "" && m.name != "arguments" {
				return apierr.InvalidBody(f+"."+m.name, "%s.%s is required", f, m.name)
			}
		}
		calls = append(calls, tc)
		return nil
	})
	return calls, err
}

func (p *Parsed) tools(v gjson.Result) error {
	return each("tools", v, "tools must be an array of {name, description, parameters, strict}", func(f string, t gjson.Result) error {
		var tool runner.Tool
		if !t.IsObject() {
			return apierr.InvalidBody(f, "%s must be an object {name, description, parameters, strict}", f)
		}
		var err error
		t.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "name":
				err = str(f+".name", v, &tool.Name)
			case "description":
				err = str(f+".description", v, &tool.Description)
			case "parameters":
				if !v.IsObject() {
					err = apierr.InvalidBody(f+".parameters", "%s.parameters must be a JSON Schema object", f)
				}
				tool.Parameters = json.RawMessage(v.Raw)
			case "strict":
				err = boolean(f+".strict", v, &tool.Strict)
			default:
				err = apierr.InvalidBody(f+"."+k.Str, "unknown field %q in a tool", k.Str)
			}
			return err == nil
		})
		if err == nil && tool.Name == "" {
			err = apierr.InvalidBody(f+".name", "%s.name is required", f)
		}
		p.Request.Tools = append(p.Request.Tools, tool)
		return err
	})
}

func str(param string, v gjson.Result, dst *string) error {
	if v.Type != gjson.String && v.Type != gjson.Null {
		return apierr.InvalidBody(param, "%s must be a string", param)
	}
	*dst = v.Str
	return nil
}

func boolean(param string, v gjson.Result, dst *bool) error {
	if v.Type != gjson.True && v.Type != gjson.False {
		return apierr.InvalidBody(param, "%s must be a boolean", param)
	}
	*dst = v.Bool()
	return nil
}

// id checks a session or thread id as the run stage checks the headers
// that carry them.
func id(param string, v gjson.Result, dst *string) error {
	if err := str(param, v, dst); err != nil {
		return err
	}
	if len(*dst) > maxIDLen || !utf8.ValidString(*dst) || strings.IndexFunc(*dst, func(r rune) bool { return !filters.IDChar(r) }) >= 0 {
		return apierr.InvalidBody(param, "%s must be an id runedge issued (at most %d ASCII letters, digits, '.', '_', ':' or '-')", param, maxIDLen)
	}
	return nil
}
