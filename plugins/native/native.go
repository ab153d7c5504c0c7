// Package native is the built-in default mapping run as Go code in the
// host: the plugins/compat functions that the default plugin
// (plugins/openai) registers with the guest SDK, behind the same contract
// as a WebAssembly plugin (plugins/runtime's Engine.Native). The host runs
// it while a stage's configured plugin is Ref, and WebAssembly only for the
// plugins an operator names instead, as Envoy runs its own filters natively
// and extensions in wasm (RATIONALE.md, "The default mapping runs
// natively").
package native

import (
	"errors"

	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/compat"
	"github.com/runedge/runedge/plugins/runtime"
)

// Ref is how a configuration names the built-in default mapping, in place
// of a plugin file: no file can be named so.
const Ref = "builtin:openai"

// Name is the plugin's name in errors and metrics, the name the wasm build
// (openai.wasm) has too, so that dashboards follow a swap either way.
const Name = "openai"

// Version is what the plugin list and the swap history show for it.
const Version = "builtin"

// Hooks are the default mapping's hooks, as the wasm build exports them:
// compat's client faults become *runtime.InputError (a 400 naming the
// field), everything else a fault (a 500 naming the plugin).
func Hooks() runtime.NativeHooks {
	return runtime.NativeHooks{MapRequest: MapRequest, MapResult: MapResult,
		MapRequestView: MapRequestView, MapResultView: compat.MapResultView,
		MapRequestDecoded: compat.MapRequestDecoded, MapResultJSON: true}
}

// MapRequest is the default map_request.
func MapRequest(in []byte) ([]byte, error) { return inputErrors(compat.MapRequest(in)) }

// MapRequestView is the default map_request on the host's view of its
// input (runtime.NativeHooks.MapRequestView).
func MapRequestView(v abi.RequestView) ([]byte, error) { return inputErrors(compat.MapRequestView(v)) }

// inputErrors passes compat's client faults on as the runtime's (one type,
// abi.InputError), unwrapped, and nothing beside them.
func inputErrors(out []byte, err error) ([]byte, error) {
	if ie := (*runtime.InputError)(nil); errors.As(err, &ie) {
		return nil, ie
	}
	return out, err
}

// MapResult is the default map_result. Its input comes from the host, so
// every error is a fault.
func MapResult(in []byte) ([]byte, error) { return compat.MapResult(in) }

// Load returns the default mapping as a native plugin of e.
func Load(e *runtime.Engine, opts runtime.Options) (*runtime.Plugin, error) {
	opts.Name = Name
	return e.Native(Name, Version, Hooks(), opts)
}
