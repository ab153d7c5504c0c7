package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/runner/native"
)

// A native plugin keeps a wasm plugin's contract: a client fault is an
// *InputError, any other error and a panic a *Fault naming the plugin and
// the hook (the host keeps serving), an input over MaxInputBytes a Fault
// before the hook runs, an unimplemented hook a Fault; calls are counted
// in the plugin metrics like a wasm plugin's, without instances.
func TestNativePluginContract(t *testing.T) {
	e, reg := newMetricsEngine(t)
	p, err := e.Native("nat", "builtin", NativeHooks{
		MapRequest: func(in []byte) ([]byte, error) {
			switch string(in) {
			case "bad":
				return nil, &InputError{Message: "no", Param: "messages", Code: "invalid_body"}
			case "boom":
				panic("boom")
			case "err":
				return nil, errors.New("broken")
			}
			return append([]byte("out:"), in...), nil
		},
	}, Options{MaxInputBytes: 8})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if out, err := p.Call(ctx, MapRequest, []byte("x")); err != nil || string(out) != "out:x" {
		t.Fatalf("call: %q %v", out, err)
	}
	var ie *InputError
	if _, err := p.Call(ctx, MapRequest, []byte("bad")); !errors.As(err, &ie) || ie.Param != "messages" {
		t.Fatalf("input error: %v", err)
	}
	for in, cause := range map[string]string{"boom": "panic: boom", "err": "broken", "123456789": "exceeds the limit"} {
		_, err := p.Call(ctx, MapRequest, []byte(in))
		f := wantFault(t, err)
		if f.Plugin != "nat" || f.Hook != "map_request" || !strings.Contains(f.Err.Error(), cause) {
			t.Fatalf("%s: fault %+v", in, f)
		}
	}
	if _, err := p.Call(ctx, MapResult, []byte("x")); wantFault(t, err) == nil {
		t.Fatal("an unimplemented hook was called")
	}
	if !p.IsNative() || p.Version() != "builtin" || p.SHA256() != "" || p.Has(MapResult) || !p.Has(MapRequest) {
		t.Fatalf("plugin %+v", p)
	}
	wantStats(t, p, Stats{})
	// The over-large input is counted as a call too, as for wasm plugins.
	wantSeries(t, series(t, reg, "runedge_plugin_calls_total"), map[string]float64{"hook=map_request,plugin=nat": 5})
	if n := series(t, reg, "runedge_plugin_errors_total")["hook=map_request,kind=input,plugin=nat"]; n != 1 {
		t.Fatalf("input errors: %v", n)
	}
	if inst := series(t, reg, "runedge_plugin_instances"); len(inst) != 0 {
		t.Fatalf("a native plugin reports instances: %v", inst)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// MapResult hands a native plugin with a view hook the host's view of the
// input, not the envelope, under Call's contract (a panic or an error a
// Fault naming map_result, an input over the limit a Fault before the hook
// runs, every call counted); a plugin without one is Called with the
// envelope.
func TestNativeMapResultView(t *testing.T) {
	e, reg := newMetricsEngine(t)
	var enveloped int
	p, err := e.Native("nat", "builtin", NativeHooks{
		MapResult: func(in []byte) ([]byte, error) { enveloped++; return in, nil },
		MapResultView: func(v abi.ResultView) ([]byte, error) {
			switch v.Text.Str() {
			case "boom":
				panic("boom")
			case "err":
				return nil, errors.New("broken")
			}
			return append([]byte("view:"), v.ID...), nil
		},
	}, Options{MaxInputBytes: 200})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in := func(text string) *abi.ResultInput {
		return &abi.ResultInput{Endpoint: abi.EndpointChat, ID: "chatcmpl-1", Created: 1, Model: "service",
			Status: abi.ResultCompleted, Result: native.Result{Text: text}}
	}
	if out, err := p.MapResult(ctx, in("hi")); err != nil || string(out) != `view:"chatcmpl-1"` {
		t.Fatalf("view: %q %v", out, err)
	}
	for text, cause := range map[string]string{"boom": "panic: boom", "err": "broken", strings.Repeat("x", 200): "exceeds the limit"} {
		_, err := p.MapResult(ctx, in(text))
		if f := wantFault(t, err); f.Plugin != "nat" || f.Hook != "map_result" || !strings.Contains(f.Err.Error(), cause) {
			t.Fatalf("%.10s: fault %+v", text, f)
		}
	}
	if enveloped != 0 {
		t.Fatalf("the envelope hook ran %d times", enveloped)
	}
	wantSeries(t, series(t, reg, "runedge_plugin_calls_total"), map[string]float64{"hook=map_result,plugin=nat": 4})

	// Without a view hook, the envelope goes through Call.
	q, err := e.Native("plain", "builtin", NativeHooks{MapResult: func(in []byte) ([]byte, error) { return in, nil }}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := in("hi").AppendJSON(nil)
	if out, err := q.MapResult(ctx, in("hi")); err != nil || string(out) != string(want) {
		t.Fatalf("envelope: %s %v, want %s", out, err, want)
	}
}

// MapRequest hands a native plugin with a view hook the host's view of
// the input, the body as it came; a client fault stays the client's (an
// *InputError), a panic is a Fault naming map_request, and the input limit
// counts the body.
func TestNativeMapRequestView(t *testing.T) {
	e, _ := newMetricsEngine(t)
	p, err := e.Native("nat", "builtin", NativeHooks{
		MapRequest: func(in []byte) ([]byte, error) { return nil, errors.New("the envelope hook ran") },
		MapRequestView: func(v abi.RequestView) ([]byte, error) {
			switch {
			case v.Body.Is("bad"):
				return nil, &InputError{Message: "no", Param: "messages"}
			case v.Body.Is("boom"):
				panic("boom")
			}
			return []byte(string(v.TenantID) + " " + string(v.Body)), nil
		},
	}, Options{MaxInputBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in := func(body string) *abi.RequestInput {
		return &abi.RequestInput{Endpoint: abi.EndpointChat, TenantID: "acme", Body: []byte(body)}
	}
	if out, err := p.MapRequest(ctx, in(` {"model":"service"} `)); err != nil || string(out) != `"acme" {"model":"service"}` {
		t.Fatalf("view: %q %v", out, err)
	}
	var ie *InputError
	if _, err := p.MapRequest(ctx, in(`"bad"`)); !errors.As(err, &ie) || ie.Param != "messages" {
		t.Fatalf("input error: %v", err)
	}
	for body, cause := range map[string]string{`"boom"`: "panic: boom", `"` + strings.Repeat("x", 100) + `"`: "exceeds the limit"} {
		if f := wantFault(t, func() error { _, err := p.MapRequest(ctx, in(body)); return err }()); f.Hook != "map_request" || !strings.Contains(f.Err.Error(), cause) {
			t.Fatalf("%.10s: fault %+v", body, f)
		}
	}
}

// ResultIsJSON is the native hooks' word (MapResultJSON), and only for a
// plugin whose map_result runs on the view (whose output it describes).
func TestNativeResultIsJSON(t *testing.T) {
	e, _ := newMetricsEngine(t)
	hook := func(in []byte) ([]byte, error) { return in, nil }
	view := func(abi.ResultView) ([]byte, error) { return []byte(`{}`), nil }
	for _, tc := range []struct {
		hooks NativeHooks
		want  bool
	}{
		{NativeHooks{MapResult: hook, MapResultView: view, MapResultJSON: true}, true},
		{NativeHooks{MapResult: hook, MapResultView: view}, false},
		{NativeHooks{MapResult: hook, MapResultJSON: true}, false},
	} {
		p, err := e.Native("nat", "builtin", tc.hooks, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.ResultIsJSON(); got != tc.want {
			t.Errorf("%+v: ResultIsJSON %v, want %v", tc.hooks, got, tc.want)
		}
	}
}
