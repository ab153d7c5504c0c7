package runtime

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/plugins/abi"
)

func TestCallGoEcho(t *testing.T) {
	e := newEngine(t)
	p := loadGo(t, e, "echo", Options{})
	ctx := context.Background()

	first, err := p.Call(ctx, MapRequest, []byte(`{"model":"m"}`))
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	if string(first) != `{"model":"m"}` {
		t.Fatalf("Call = %q, want the input back", first)
	}
	// The output is a copy: the guest reusing its buffers must not change it.
	if _, err := p.Call(ctx, MapRequest, []byte(`XXXXXXXXXXXXX`)); err != nil {
		t.Fatalf("second Call: %v", err)
	}
	if string(first) != `{"model":"m"}` {
		t.Fatalf("first output changed to %q after a second call", first)
	}
	out, err := p.Call(ctx, MapResult, []byte("ok"))
	if err != nil || string(out) != "result:ok" {
		t.Fatalf("Call(MapResult) = %q, %v; want %q", out, err, "result:ok")
	}
	big := bytes.Repeat([]byte("0123456789"), 100_000) // beyond the SDK's initial buffer
	out, err = p.Call(ctx, MapRequest, big)
	if err != nil || !bytes.Equal(out, big) {
		t.Fatalf("Call with 1 MB: %d bytes, %v; want the input back", len(out), err)
	}
	if out, err = p.Call(ctx, MapRequest, nil); err != nil || len(out) != 0 {
		t.Fatalf("Call with empty input = %q, %v; want empty output", out, err)
	}
	wantStats(t, p, Stats{Instances: 1, Idle: 1})
}

// TestCallRawEcho calls a guest assembled without Go or the SDK.
func TestCallRawEcho(t *testing.T) {
	p := loadRaw(t, newEngine(t), echoGuest(), Options{})
	for _, h := range []Hook{MapRequest, MapResult} {
		out, err := p.Call(context.Background(), h, []byte("hello"))
		if err != nil || string(out) != "hello" {
			t.Fatalf("Call(%s) = %q, %v; want %q", h, out, err, "hello")
		}
	}
}

func TestCallInputError(t *testing.T) {
	p := loadGo(t, newEngine(t), "echo", Options{})
	tests := []struct {
		in   string
		want InputError
	}{
		{"invalid:bad \"model\"\n|model|model_not_found", InputError{Message: "bad \"model\"\n", Param: "model", Code: "model_not_found"}},
		{"invalid:no details", InputError{Message: "no details", Code: "invalid_body"}},
	}
	for _, tt := range tests {
		_, err := p.Call(context.Background(), MapResult, []byte(tt.in))
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Fatalf("Call(%q) error = %v (%T), want an *InputError", tt.in, err, err)
		}
		if *ie != tt.want {
			t.Errorf("Call(%q) = %+v, want %+v", tt.in, *ie, tt.want)
		}
	}
	// A client error is not the plugin's fault: its instance stays.
	wantStats(t, p, Stats{Instances: 1, Idle: 1})
}

func TestCallInputErrorMalformedBody(t *testing.T) {
	g := echoGuest()
	g.status = 1 // the echoed input is the error body
	p := loadRaw(t, newEngine(t), g, Options{})

	_, err := p.Call(context.Background(), MapRequest, []byte(`{"error":{"message":"m","param":"p"}}`))
	var ie *InputError
	if !errors.As(err, &ie) || *ie != (InputError{Message: "m", Param: "p", Code: "invalid_body"}) {
		t.Fatalf("well-formed body: error = %#v, want InputError{m, p, invalid_body}", err)
	}
	for _, body := range []string{`not json`, `{"error":{}}`, `{}`} {
		_, err := p.Call(context.Background(), MapRequest, []byte(body))
		f := wantFault(t, err)
		if !strings.Contains(f.Error(), "status 1") {
			t.Errorf("body %s: fault %q does not mention status 1", body, f)
		}
	}
}

func TestCallFaults(t *testing.T) {
	withStatus := echoGuest()
	withStatus.status = 7
	trap := echoGuest()
	trap.trap = true
	outOfRange := echoGuest()
	outOfRange.output = 70_000<<32 | 10 // past the guest's one page
	allocOutOfRange := echoGuest()
	allocOutOfRange.allocAt = 65_530

	tests := []struct {
		name string
		g    rawGuest
		in   string
		want string
	}{
		{"garbage status", withStatus, "x", "plugin raw: map_request: invalid status 7"},
		{"unreachable", trap, "x", "plugin raw: map_request: runedge_map_request: wasm error: unreachable"},
		{"output out of range", outOfRange, "x", "runedge_output: range [70000, 70010) is outside the guest's 65536 bytes of memory"},
		{"alloc out of range", allocOutOfRange, "0123456789", "runedge_alloc: range [65530, 65540) is outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := loadRaw(t, newEngine(t), tt.g, Options{})
			_, err := p.Call(context.Background(), MapRequest, []byte(tt.in))
			f := wantFault(t, err)
			if !strings.Contains(f.Error(), tt.want) {
				t.Errorf("Error() = %q, want it to contain %q", f.Error(), tt.want)
			}
			if f.Plugin != "raw" || f.Hook != "map_request" || f.RunErrorCode() != "plugin_error" {
				t.Errorf("fault = {%q, %q, code %q}, want {raw, map_request, plugin_error}", f.Plugin, f.Hook, f.RunErrorCode())
			}
			if strings.Contains(f.Error(), "\n") {
				t.Errorf("Error() = %q spans lines", f.Error())
			}
			// The faulty instance is closed, not returned to the pool.
			wantStats(t, p, Stats{Instances: 0, Idle: 0})
		})
	}
}

// TestCallGoGuestFaults makes a Go guest fail in each way, and checks that
// the faulty instance is discarded and the next call gets a working one.
func TestCallGoGuestFaults(t *testing.T) {
	p := loadGo(t, newEngine(t), "echo", Options{})
	tests := []struct {
		in   string
		want string
	}{
		{"fail:upstream schema changed", "plugin echo: map_result: internal error: upstream schema changed"},
		{"panic", "plugin echo: map_result: internal error: panic: boom"},
		{"crash", "wasm error: unreachable (stderr: panic: crash in goroutine)"},
		{"exit:3", "runedge_map_result: guest exited with code 3 (stderr: exiting on purpose)"},
	}
	for _, tt := range tests {
		_, err := p.Call(context.Background(), MapResult, []byte(tt.in))
		f := wantFault(t, err)
		if !strings.Contains(f.Error(), tt.want) {
			t.Errorf("Call(%q): Error() = %q, want it to contain %q", tt.in, f.Error(), tt.want)
		}
		wantStats(t, p, Stats{Instances: 0, Idle: 0})
		out, err := p.Call(context.Background(), MapResult, []byte("after"))
		if err != nil || string(out) != "result:after" {
			t.Fatalf("Call after %q = %q, %v; want a fresh instance to answer", tt.in, out, err)
		}
		wantStats(t, p, Stats{Instances: 1, Idle: 1})
	}
}

func TestCallMemoryLimit(t *testing.T) {
	// The budget is generous: growing the memory to its limit copies it over
	// and over, which may take longer than the default on a loaded machine.
	p := loadGo(t, newEngine(t), "echo", Options{MaxMemoryPages: 512, CallTimeout: 10 * time.Second}) // 32 MiB
	if out, err := p.Call(context.Background(), MapResult, []byte("hog:4")); err != nil || string(out) != "hogged" {
		t.Fatalf("allocating 4 MiB under a 32 MiB limit: %q, %v", out, err)
	}
	_, err := p.Call(context.Background(), MapResult, []byte("hog:64"))
	f := wantFault(t, err)
	if !strings.Contains(f.Error(), "out of memory") {
		t.Errorf("Error() = %q, want it to mention running out of memory", f.Error())
	}
	wantStats(t, p, Stats{Instances: 0, Idle: 0})
	if out, err := p.Call(context.Background(), MapResult, []byte("fine")); err != nil || string(out) != "result:fine" {
		t.Fatalf("Call after running out of memory = %q, %v", out, err)
	}
}

func TestCallInputTooLarge(t *testing.T) {
	p := loadRaw(t, newEngine(t), echoGuest(), Options{MaxInputBytes: 16})
	if _, err := p.Call(context.Background(), MapRequest, make([]byte, 16)); err != nil {
		t.Fatalf("input at the limit: %v", err)
	}
	_, err := p.Call(context.Background(), MapRequest, make([]byte, 17))
	if f := wantFault(t, err); !strings.Contains(f.Error(), "input of 17 bytes exceeds the limit of 16") {
		t.Errorf("Error() = %q", f.Error())
	}
}

func TestCallMissingHook(t *testing.T) {
	g := echoGuest()
	g.hooks = int32(abi.HookMapRequest)
	p := loadRaw(t, newEngine(t), g, Options{})
	if p.Has(MapResult) || !p.Has(MapRequest) || p.Has(Hook(7)) {
		t.Fatalf("Has(MapRequest, MapResult, 7) = %v, %v, %v; want true, false, false", p.Has(MapRequest), p.Has(MapResult), p.Has(Hook(7)))
	}
	// The guest exports runedge_map_result, but its bit is unset: not called.
	_, err := p.Call(context.Background(), MapResult, []byte("x"))
	if f := wantFault(t, err); !strings.Contains(f.Error(), "does not implement map_result") {
		t.Errorf("Error() = %q", f.Error())
	}
	_, err = p.Call(context.Background(), Hook(7), []byte("x"))
	if f := wantFault(t, err); !strings.Contains(f.Error(), "hook(7)") {
		t.Errorf("Error() = %q", f.Error())
	}
}

func TestCallAfterEngineClose(t *testing.T) {
	e := newEngine(t)
	p := loadRaw(t, e, echoGuest(), Options{})
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := p.Call(context.Background(), MapRequest, []byte("x"))
	wantFault(t, err)
}

func TestHookString(t *testing.T) {
	for h, want := range map[Hook]string{MapRequest: "map_request", MapResult: "map_result", Hook(9): "hook(9)"} {
		if got := h.String(); got != want {
			t.Errorf("Hook(%d).String() = %q, want %q", int(h), got, want)
		}
	}
}
