package sdk

import (
	"errors"

	"github.com/runedge/runedge/plugins/abi"
)

// Hooks are the mapping functions a plugin implements. A nil field means the
// plugin does not implement that hook: its bit in runedge_hooks stays unset
// and the host never calls it.
//
// The in slice of MapRequest, MapResult and MapStream aliases a buffer that the next call
// reuses: a hook must not keep it, or anything pointing into it, after it
// returns. The returned slice is handed to the host as is; the SDK keeps it
// reachable until the next call.
type Hooks struct {
	// MapRequest maps an incoming request body to the runner's form.
	MapRequest func(in []byte) ([]byte, error)
	// MapResult maps a runner result to the response body sent to the client.
	MapResult func(in []byte) ([]byte, error)
	// SelfTest is run by the host once when it loads the plugin, before the
	// plugin serves anything; an error makes the load fail.
	SelfTest func() error
	// MapStream maps streamed text in batches: its input and output are the
	// JSON objects of plugins/ABI.md ("runedge_map_stream"). MapStreamFunc
	// builds it from a function on decoded values. A plugin that leaves it
	// nil costs the stream nothing: the host never calls it.
	MapStream func(in []byte) ([]byte, error)
	// Version is the plugin's version, such as "1.2.0", which the host shows
	// next to the plugin's SHA-256; "" declares none. At most 64 bytes of
	// printable UTF-8, or the plugin fails to load.
	Version string
}

// Hook bits of runedge_hooks (plugins/abi).
const (
	bitMapRequest = abi.HookMapRequest
	bitMapResult  = abi.HookMapResult
	bitSelfTest   = abi.HookSelfTest
	bitMapStream  = abi.HookMapStream
)

// registered holds the hooks given to Register. A plugin runs one call at a
// time on one goroutine, so plain variables are enough.
var registered Hooks

// Register installs the plugin's hooks. Call it from an init function of the
// plugin's main package: the host reads the hook bitmap right after the
// module's initialisation. A later call replaces the hooks of an earlier one.
func Register(h Hooks) { registered = h }

// hookBits is the value of runedge_hooks for the registered hooks.
func hookBits() int32 {
	var bits int32
	if registered.MapRequest != nil {
		bits |= bitMapRequest
	}
	if registered.MapResult != nil {
		bits |= bitMapResult
	}
	if registered.SelfTest != nil {
		bits |= bitSelfTest
	}
	if registered.MapStream != nil {
		bits |= bitMapStream
	}
	return bits
}

// InvalidInput returns the error a hook returns, possibly wrapped, when its
// input is invalid through the client's fault. The host answers such a call
// with a client error (HTTP 400) carrying message, param and code, instead of
// the server error that any other hook error produces. param names the
// offending field ("" when none); code defaults to "invalid_body" on the host.
func InvalidInput(message, param, code string) error {
	return &invalidInputError{message: message, param: param, code: code}
}

// invalidInputError is the error made by InvalidInput.
type invalidInputError struct {
	message, param, code string
}

func (e *invalidInputError) Error() string { return e.message }

// asInvalidInput reports whether err is or wraps an InvalidInput error.
func asInvalidInput(err error) (*invalidInputError, bool) {
	var ie *invalidInputError
	ok := errors.As(err, &ie)
	return ie, ok
}
