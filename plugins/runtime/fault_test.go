package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/plugins/abi"
)

// TestGoGuestFaults makes Go guests fail in each way the host must survive,
// through the SDK (echo) and around it (rawabi, which breaks the ABI), and
// checks that each call fails alone: its instance is discarded and the next
// call works.
func TestGoGuestFaults(t *testing.T) {
	e := newEngine(t)
	// Growing the memory to its limit copies it over and over: on a loaded
	// machine that may take longer than the default budget.
	echo := loadGo(t, e, "echo", Options{MaxMemoryPages: 512, CallTimeout: 10 * time.Second}) // 32 MiB
	rawabi := loadGo(t, e, "rawabi", Options{})
	tests := []struct {
		name string
		p    *Plugin
		hook Hook
		in   string
		want string
	}{
		{"trap", echo, MapResult, "crash", "runedge_map_result: wasm error: unreachable (stderr: panic: crash in goroutine)"},
		{"memory blow-up", echo, MapResult, "hog:64", "out of memory"},
		{"internal error", echo, MapResult, "fail:schema changed", "plugin echo: map_result: internal error: schema changed"},
		{"internal error in map_stream", echo, MapStream, `{"text":"fail"}`, "map_stream: internal error: stream failure on purpose"},
		{"bad status", rawabi, MapRequest, "status:7", "plugin rawabi: map_request: invalid status 7"},
		{"negative status", rawabi, MapRequest, "status:-1", "invalid status 4294967295"},
		{"output out of range", rawabi, MapRequest, "out-of-range", "runedge_output: range [4294901760, 4294901776) is outside the guest's"},
		{"missing export", rawabi, MapStream, "x", "plugin rawabi: map_stream: plugin does not implement map_stream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := callAndRecover(t, tt.p, tt.hook, tt.in, tt.want)
			if f.Plugin != tt.p.Name() || f.Hook != tt.hook.String() || f.RunErrorCode() != "plugin_error" {
				t.Errorf("fault = {%q, %q, %q}, want {%q, %q, plugin_error}", f.Plugin, f.Hook, f.RunErrorCode(), tt.p.Name(), tt.hook)
			}
		})
	}
}

func TestCallMapStream(t *testing.T) {
	p := loadGo(t, newEngine(t), "echo", Options{})
	if !p.Has(MapStream) {
		t.Fatal("Has(MapStream) = false for a plugin registering MapStream")
	}
	tests := []struct{ in, want string }{
		{`{"endpoint":"chat.completions","id":"r1","tenant_id":"t","text":"hello wor","final":false}`, `{"emit":"HELLO ","hold":"WOR"}`},
		{`{"endpoint":"responses","id":"r1","tenant_id":"t","text":"WORld","final":true}`, `{"emit":"WORLD","hold":""}`},
		{`{"text":"caf\u00e9 \"x\"\n","final":false}`, `{"emit":"CAFÉ ","hold":"\"X\"\n"}`},
	}
	for _, tt := range tests {
		out, err := p.Call(context.Background(), MapStream, []byte(tt.in))
		if err != nil || string(out) != tt.want {
			t.Errorf("Call(MapStream, %s) = %s, %v; want %s", tt.in, out, err, tt.want)
		}
	}
	_, err := p.Call(context.Background(), MapStream, []byte(`{"text":`))
	if f := wantFault(t, err); !strings.Contains(f.Error(), "map_stream input: ") {
		t.Errorf("malformed input: Error() = %q", f.Error())
	}
}

// TestCallMapStreamInvalidInput checks that status 1 from map_stream is a
// fault, not an *InputError: the reply has already started.
func TestCallMapStreamInvalidInput(t *testing.T) {
	g := echoGuest()
	g.status = 1 // the echoed input is the error body
	g.hooks |= int32(abi.HookMapStream)
	p := loadRaw(t, newEngine(t), g, Options{})
	body := []byte(`{"error":{"message":"m"}}`)
	if _, err := p.Call(context.Background(), MapResult, body); err == nil || errors.As(err, new(*Fault)) {
		t.Fatalf("map_result: error = %v, want an *InputError", err)
	}
	_, err := p.Call(context.Background(), MapStream, body)
	if f := wantFault(t, err); !strings.Contains(f.Error(), "status 1 (invalid input) from map_stream") {
		t.Errorf("map_stream: Error() = %q", f.Error())
	}
}

func TestHookNames(t *testing.T) {
	for h, want := range map[Hook]string{MapRequest: "map_request", MapResult: "map_result", MapStream: "map_stream", Hook(-1): "hook(-1)", Hook(3): "hook(3)"} {
		if got := h.String(); got != want {
			t.Errorf("Hook(%d).String() = %q, want %q", int(h), got, want)
		}
	}
}
