package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/runedge/runedge/plugins/compat"
	"github.com/runedge/runedge/plugins/plugintest"
	"github.com/runedge/runedge/plugins/runtime"
)

// check runs `plugin check` on the plugin built from pkg.
func check(t *testing.T, pkg string, flags ...string) (stdout string, err error) {
	t.Helper()
	var o, e bytes.Buffer
	args := append([]string{"--cache-dir", plugintest.CacheDir(t)}, flags...)
	args = append(args, plugintest.Build(t, pkg))
	err = pluginCheck(context.Background(), args, Env{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }})
	return o.String(), err
}

// The default plugin passes, serving both endpoints.
func TestPluginCheckDefaultPlugin(t *testing.T) {
	out, err := check(t, "github.com/runedge/runedge/plugins/openai")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wasm, err := os.ReadFile(plugintest.Build(t, "github.com/runedge/runedge/plugins/openai"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	for _, want := range []string{
		"plugin   openai (",
		"sha256   " + hex.EncodeToString(sum[:]),
		"hooks    map_request, map_result\n",
		`simple      map_request  input [user "Say hello."]; same as the default mapping`,
		`structured  map_request  input [user "Say hello."], output_schema; same as the default mapping`,
		`streaming   map_result   chat.completion "Hello! Mail jane.doe@example.com or call +1 555 123 4567."; same as the default mapping`,
		`invalid     map_request  client error invalid_body (param "messages")`,
		"\nresponses\n  simple      map_request",
		`streaming   map_result   response "Hello! Mail jane.doe@example.com or call +1 555 123 4567."; same as the default mapping`,
		`snapshot    map_result   response without text; same as the default mapping`,
		`invalid     map_request  client error invalid_body (param "input")`,
		"\nok\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not served") {
		t.Errorf("an endpoint is reported as not served:\n%s", out)
	}
}

// A plugin that maps one endpoint passes, the other reported as not served.
func TestPluginCheckOneEndpoint(t *testing.T) {
	out, err := check(t, "./testdata/chatonly")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		`simple      map_request  input [user "Say hello."]; same as the default mapping`,
		"responses\n  not served: every call faulted",
		"\nok\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// Asked for an endpoint it does not serve, the same plugin fails.
func TestPluginCheckEndpointNotServed(t *testing.T) {
	out, err := check(t, "./testdata/chatonly", "--endpoint", "responses")
	if err == nil || !strings.Contains(err.Error(), "responses simple map_request: plugin chatonly: map_request") {
		t.Fatalf("err = %v\n%s", err, out)
	}
	if !strings.Contains(out, "FAILED") {
		t.Errorf("output does not say FAILED:\n%s", out)
	}
}

// A plugin whose self-test fails does not load; the reason is shown.
func TestPluginCheckFailingSelfTest(t *testing.T) {
	_, err := check(t, "../../plugins/runtime/testdata/badselftest")
	if err == nil || !strings.Contains(err.Error(), "self test failed") || !strings.Contains(err.Error(), "golden case mismatch") {
		t.Fatalf("err = %v, want the self-test failure", err)
	}
}

// A plugin that loads but maps nonsense (the runtime's echo guest) fails
// the check, naming what is wrong.
func TestPluginCheckBadOutput(t *testing.T) {
	out, err := check(t, "../../plugins/runtime/testdata/echo")
	if err == nil {
		t.Fatalf("want a failure:\n%s", out)
	}
	for _, want := range []string{"chat.completions simple map_request: output is not a native request", "map_result: output is not JSON"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

// The redact example exercises map_stream: the address split across pieces
// comes out redacted, agreeing with map_result.
func TestPluginCheckStreamingPlugin(t *testing.T) {
	out, err := check(t, "../../examples/plugins/redact")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		"hooks    map_result, map_stream\n",
		"version  1.0.0\n",
		"streaming   map_stream   9 pieces → [",
		"[redacted email]",
		"snapshot    map_result   response without text; same as the default mapping",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestPluginCheckUsage(t *testing.T) {
	env := Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "want `plugin check"},
		{[]string{"a.wasm", "b.wasm"}, "want `plugin check"},
		{[]string{"--endpoint", "embeddings", "a.wasm"}, `--endpoint "embeddings"`},
		{[]string{"does-not-exist.wasm"}, "does-not-exist.wasm"},
	} {
		if err := pluginCheck(context.Background(), c.args, env); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want one containing %q", c.args, err, c.want)
		}
	}
}

// fakePlugin stands in for a loaded plugin: hooks are plain Go functions,
// so that each verdict of the check can be provoked without building wasm.
type fakePlugin map[runtime.Hook]func([]byte) ([]byte, error)

func (f fakePlugin) Has(h runtime.Hook) bool { return f[h] != nil }

func (f fakePlugin) Call(_ context.Context, h runtime.Hook, in []byte) ([]byte, error) {
	return f[h](in)
}

// goodPlugin maps like the default plugin and streams text unchanged.
func goodPlugin() fakePlugin {
	return fakePlugin{
		runtime.MapRequest: func(in []byte) ([]byte, error) {
			out, err := compat.MapRequest(in)
			if ie := (*compat.InputError)(nil); errors.As(err, &ie) {
				return nil, &runtime.InputError{Message: ie.Message, Param: ie.Param, Code: ie.Code}
			}
			return out, err
		},
		runtime.MapResult: compat.MapResult,
		runtime.MapStream: func(in []byte) ([]byte, error) {
			return sjson.SetBytes([]byte(`{"hold":""}`), "emit", gjson.GetBytes(in, "text").Str)
		},
	}
}

func runFake(t *testing.T, p fakePlugin) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := (&checker{plugin: p}).run(context.Background(), &out, "")
	return out.String(), err
}

func TestCheckerVerdicts(t *testing.T) {
	fault := func([]byte) ([]byte, error) {
		return nil, &runtime.Fault{Plugin: "fake", Hook: "hook", Err: errors.New("trap")}
	}
	for _, c := range []struct {
		name   string
		change func(fakePlugin)
		want   string // in the error; "" for a pass
	}{
		{"good plugin passes", func(fakePlugin) {}, ""},
		{"request-only plugin passes", func(p fakePlugin) { delete(p, runtime.MapResult); delete(p, runtime.MapStream) }, ""},
		{"stream-only plugin passes", func(p fakePlugin) { delete(p, runtime.MapRequest); delete(p, runtime.MapResult) }, ""},
		{"final call holds text back", func(p fakePlugin) {
			p[runtime.MapStream] = func([]byte) ([]byte, error) { return []byte(`{"emit":"","hold":"x"}`), nil }
		}, `streaming map_stream: the final call held back "x"`},
		{"stream output not JSON", func(p fakePlugin) {
			p[runtime.MapStream] = func([]byte) ([]byte, error) { return []byte(`emit`), nil }
		}, `output is not {"emit":"…","hold":"…"}`},
		{"stream disagrees with result", func(p fakePlugin) {
			p[runtime.MapStream] = func([]byte) ([]byte, error) { return []byte(`{"emit":"?","hold":""}`), nil }
		}, "streaming map_stream: streamed"},
		{"reply of the wrong shape", func(p fakePlugin) {
			p[runtime.MapResult] = func([]byte) ([]byte, error) { return []byte(`{"object":"list"}`), nil }
		}, "map_result: output is not a chat.completion object"},
		{"snapshot with the wrong status", func(p fakePlugin) {
			p[runtime.MapResult] = func(in []byte) ([]byte, error) {
				in, _ = sjson.SetBytes(in, "status", "completed")
				return compat.MapResult(in)
			}
		}, `responses snapshot map_result: response status is not "in_progress"`},
		{"schema dropped", func(p fakePlugin) {
			p[runtime.MapRequest] = func(in []byte) ([]byte, error) {
				out, err := compat.MapRequest(in)
				out, _ = sjson.DeleteBytes(out, "request.output_schema")
				return out, err
			}
		}, "structured map_request: request has no output_schema"},
		{"valid sample refused", func(p fakePlugin) {
			p[runtime.MapRequest] = func([]byte) ([]byte, error) { return nil, &runtime.InputError{Message: "no"} }
		}, "refused a valid sample as the client's fault"},
		{"client mistake faults", func(p fakePlugin) {
			good := p[runtime.MapRequest]
			p[runtime.MapRequest] = func(in []byte) ([]byte, error) {
				if !gjson.GetBytes(in, "body.messages").Exists() && !gjson.GetBytes(in, "body.input").Exists() {
					return fault(in)
				}
				return good(in)
			}
		}, "invalid map_request: plugin fake: hook: trap (want a client error)"},
		{"every call faults", func(p fakePlugin) {
			for h := range p {
				p[h] = fault
			}
		}, "served no endpoint"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := goodPlugin()
			c.change(p)
			out, err := runFake(t, p)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("want a pass, got %v\n%s", err, out)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("err = %v, want one containing %q\n%s", err, c.want, out)
			}
		})
	}
}

func TestVersusDefault(t *testing.T) {
	for _, c := range []struct{ out, def, want string }{
		{`{"a":1,"b":[{"c":"x"}]}`, `{"b":[{"c":"x"}],"a":1}`, "same as the default mapping"},
		{`{"a":{"b":1},"c":[],"d":{},"s":"new"}`, `{"a":{"b":2},"c":[1],"e":1,"s":"old"}`,
			`differs from the default mapping: a.b 1, +c [], +d {}, s "new", … 2 more`},
		{`{"m":{"k":"v"}}`, `{"m":{},"gone":true}`, `differs from the default mapping: +m.k "v", -gone`},
		{`{"k":"` + strings.Repeat("y", 70) + `"}`, `{"k":"n"}`,
			`differs from the default mapping: k "` + strings.Repeat("y", clipMax) + `"…`},
	} {
		if got := versusDefault([]byte(c.out), []byte(c.def)); got != c.want {
			t.Errorf("versusDefault(%s, %s)\n got %s\nwant %s", c.out, c.def, got, c.want)
		}
	}
}

// Every call acts as the tenant asked for, and --full prints outputs whole.
func TestCheckerTenantAndFull(t *testing.T) {
	p := goodPlugin()
	seen := map[string]bool{}
	for h, fn := range p {
		p[h] = func(in []byte) ([]byte, error) {
			if tenant := gjson.GetBytes(in, "tenant_id"); tenant.Exists() {
				seen[tenant.Str] = true
			}
			return fn(in)
		}
	}
	var out bytes.Buffer
	if err := (&checker{plugin: p, tenant: "acme \"corp\"", full: true}).run(context.Background(), &out, ""); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || !seen["acme \"corp\""] {
		t.Errorf("calls acted as tenants %v, want only the one asked for", seen)
	}
	if !strings.Contains(out.String(), `    {"id":"resp_check","object":"response"`) {
		t.Errorf("--full output lacks a whole reply:\n%s", out.String())
	}
}
