package mapping_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/filters/mapping"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner/schema"
)

const body = `{"model":"service","messages":[{"role":"user","content":"hi"}]}`

// stage builds the stage on a fake plugin whose map_request is f.
func stage(t *testing.T, f filtertest.Hook) (*mapping.Mapping, *filtertest.Mapper) {
	t.Helper()
	p := &filtertest.Mapper{PluginName: "fake-request", Hooks: map[runtime.Hook]filtertest.Hook{runtime.MapRequest: f}}
	m, err := mapping.New(p)
	if err != nil {
		t.Fatal(err)
	}
	return m, p
}

func answer(out string) filtertest.Hook {
	return func([]byte) ([]byte, error) { return []byte(out), nil }
}

// The plugin gets the envelope (endpoint, tenant, actor, the body as sent);
// its request becomes the exchange's native request, its echo the
// exchange's echo (compacted), and the stream flag is the edge's, whatever
// the plugin said.
func TestMapsRequest(t *testing.T) {
	m, p := stage(t, answer(`{"request": {"input": [{"role": "user", "content": "hi"}], "instructions": "be brief", "stream": false},
	  "echo": {"temperature": 0.5,
	           "store": true}}`))
	x, _ := filtertest.Exchange(filters.Responses, body)
	x.Stream = true
	x.Identity.TenantID = "acme"
	x.Identity.Actor.ID, x.Identity.Actor.Type, x.Identity.Actor.Name = "u1", "user", "Ada"
	next := &filtertest.Next{}
	if err := m.Handle(t.Context(), x, next); err != nil {
		t.Fatal(err)
	}
	if !next.Called {
		t.Fatal("next not called")
	}
	calls := p.Calls(runtime.MapRequest)
	if len(calls) != 1 {
		t.Fatalf("%d map_request calls", len(calls))
	}
	in := gjson.Parse(calls[0])
	if in.Get("endpoint").Str != "responses" || in.Get("tenant_id").Str != "acme" || in.Get("actor.name").Str != "Ada" ||
		in.Get("body").Raw != body {
		t.Errorf("envelope %s", calls[0])
	}
	if len(x.Native.Input) != 1 || x.Native.Input[0].Content != "hi" || x.Native.Instructions != "be brief" {
		t.Errorf("native request %+v", x.Native)
	}
	if !x.Native.Stream {
		t.Error("native stream false: the edge's stream flag must win")
	}
	if string(x.Echo) != `{"temperature":0.5,"store":true}` {
		t.Errorf("echo %s", x.Echo)
	}
}

// What the plugin refuses is the client's error, with the plugin's param
// and code; a plugin failure and an output the codec refuses are a 500
// plugin_error naming the plugin, its detail kept from the client. In every
// case the chain stops.
func TestRefusals(t *testing.T) {
	deep := strings.Repeat(`{"items":`, schema.MaxSchemaDepth+1) + `{}` + strings.Repeat(`}`, schema.MaxSchemaDepth+1)
	for _, c := range []struct {
		name      string
		ep        filters.Endpoint
		hook      filtertest.Hook
		status    int
		code      string
		param     string
		notInText string
	}{
		{name: "input error", ep: filters.ChatCompletions, status: 400, code: apierr.CodeInvalidBody, param: "messages.0.role",
			hook: func([]byte) ([]byte, error) {
				return nil, &runtime.InputError{Message: "role must be user", Param: "messages.0.role"}
			}},
		{name: "input error with a code", ep: filters.Responses, status: 400, code: apierr.CodeUnsupportedParameter, param: "n",
			hook: func([]byte) ([]byte, error) {
				return nil, &runtime.InputError{Message: "n > 1", Param: "n", Code: apierr.CodeUnsupportedParameter}
			}},
		{name: "fault", ep: filters.ChatCompletions, status: 500, code: apierr.CodePluginError, notInText: "/secret/path",
			hook: func([]byte) ([]byte, error) { return nil, errors.New("trap at /secret/path") }},
		{name: "not JSON", ep: filters.ChatCompletions, status: 500, code: apierr.CodePluginError, hook: answer("nope")},
		{name: "no request", ep: filters.ChatCompletions, status: 500, code: apierr.CodePluginError, hook: answer(`{"echo":{}}`)},
		{name: "no input", ep: filters.ChatCompletions, status: 500, code: apierr.CodePluginError, hook: answer(`{"request":{"input":[]}}`)},
		{name: "deep schema, chat", ep: filters.ChatCompletions, status: 400, code: apierr.CodeInvalidSchema,
			param: "response_format.json_schema.schema",
			hook:  answer(`{"request":{"input":[{"role":"user","content":"hi"}],"output_schema":` + deep + `}}`)},
		{name: "deep schema, responses", ep: filters.Responses, status: 400, code: apierr.CodeInvalidSchema,
			param: "text.format.schema",
			hook:  answer(`{"request":{"input":[{"role":"user","content":"hi"}],"output_schema":` + deep + `}}`)},
	} {
		m, _ := stage(t, c.hook)
		x, rec := filtertest.Exchange(c.ep, body)
		next := &filtertest.Next{}
		err := filtertest.Serve(t.Context(), filters.Chain(next, m), x)
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status != c.status || e.Code != c.code || e.Param != c.param {
			t.Errorf("%s: %v, want %d %s param %q", c.name, err, c.status, c.code, c.param)
			continue
		}
		if next.Called {
			t.Errorf("%s: next called", c.name)
		}
		if c.status == 500 && !strings.Contains(e.Message, "fake-request") {
			t.Errorf("%s: message %q does not name the plugin", c.name, e.Message)
		}
		if rec.Code != c.status || (c.notInText != "" && strings.Contains(rec.Body.String(), c.notInText)) {
			t.Errorf("%s: reply %d %s", c.name, rec.Code, rec.Body)
		}
	}
}

// A plugin without map_request cannot make the stage.
func TestNewNeedsMapRequest(t *testing.T) {
	p := &filtertest.Mapper{PluginName: "result-only", Hooks: map[runtime.Hook]filtertest.Hook{runtime.MapResult: answer("{}")}}
	if _, err := mapping.New(p); err == nil || !strings.Contains(err.Error(), "result-only") {
		t.Fatalf("New: %v, want an error naming the plugin", err)
	}
}
