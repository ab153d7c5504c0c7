package filtertest

import (
	"context"
	"fmt"
	"sync"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/runtime"
)

// Hook is one hook of a Mapper: a Go function from the hook's input to its
// output. Return a *runtime.InputError for a refused input, any other error
// for a plugin fault (it is wrapped in a *runtime.Fault naming the plugin,
// as the runtime does).
type Hook func(in []byte) ([]byte, error)

// Mapper is a mapping plugin for a stage's tests: each hook a Go function,
// no WebAssembly. It keeps the input of every call, so that a test can count
// a stage's plugin calls and read what it was asked. Safe for concurrent
// use (a background run calls it from its own goroutine).
type Mapper struct {
	PluginName string // default "fake"
	Hooks      map[runtime.Hook]Hook

	mu    sync.Mutex
	calls map[runtime.Hook][]string
}

var _ filters.Mapper = (*Mapper)(nil)

// Name implements filters.Mapper.
func (m *Mapper) Name() string {
	if m.PluginName == "" {
		return "fake"
	}
	return m.PluginName
}

// Has implements filters.Mapper.
func (m *Mapper) Has(h runtime.Hook) bool { return m.Hooks[h] != nil }

// Call implements filters.Mapper: it records in and runs the hook.
func (m *Mapper) Call(_ context.Context, h runtime.Hook, in []byte) ([]byte, error) {
	m.mu.Lock()
	if m.calls == nil {
		m.calls = make(map[runtime.Hook][]string)
	}
	m.calls[h] = append(m.calls[h], string(in))
	m.mu.Unlock()
	f := m.Hooks[h]
	if f == nil {
		return nil, &runtime.Fault{Plugin: m.Name(), Hook: h.String(), Err: fmt.Errorf("plugin does not implement %s", h)}
	}
	out, err := f(in)
	if err == nil {
		return out, nil
	}
	if ie, ok := err.(*runtime.InputError); ok {
		return nil, ie
	}
	return nil, &runtime.Fault{Plugin: m.Name(), Hook: h.String(), Err: err}
}

// MapRequest implements filters.Mapper: the input as its envelope, through
// Call, as a plugin in WebAssembly gets it.
func (m *Mapper) MapRequest(ctx context.Context, in *abi.RequestInput) ([]byte, error) {
	return m.Call(ctx, runtime.MapRequest, in.AppendJSON(nil))
}

// MapResult implements filters.Mapper, as MapRequest does.
func (m *Mapper) MapResult(ctx context.Context, in *abi.ResultInput) ([]byte, error) {
	return m.Call(ctx, runtime.MapResult, in.AppendJSON(nil))
}

// Calls returns the inputs of the calls of hook h so far, in order.
func (m *Mapper) Calls(h runtime.Hook) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.calls[h]...)
}
