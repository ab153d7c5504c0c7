package runtime

import (
	"errors"
	"strings"

	"github.com/runedge/runedge/plugins/abi"
)

// ErrClosed is the cause of the Fault returned by a Call on a closed Plugin.
var ErrClosed = errors.New("plugin is closed")

// InputError is returned by Call when the plugin rejected its input as
// invalid (hook status 1): Message, Param (the offending field, "" when
// none) and Code ("invalid_body" when the plugin gave none). It is the
// client's fault: the edge answers with a 400 carrying these fields. It is
// the ABI's one input-error type, which the default mapping returns too.
type InputError = abi.InputError

// parseInputError decodes the output of a status-1 call with the ABI's
// codec: {"error":{"message":"...","param":"...","code":"..."}}.
func parseInputError(body []byte) (*InputError, error) {
	e, err := abi.DecodeInputError(body)
	if err != nil {
		return nil, err
	}
	return &e, nil
}

// Fault is returned by Call for anything that is the plugin's fault rather
// than the client's: a trap (running out of memory included), running past
// the time budget (errors.Is(f, ErrTimeout)), an internal error (status 2),
// malformed output, a missing hook, an over-large input, a failure to
// instantiate. The instance involved is discarded. The edge answers with a
// 500 naming the plugin.
type Fault struct {
	Plugin string // the plugin's name
	Hook   string // the hook called, e.g. "map_result"
	Err    error  // the cause; for traps it includes the wasm stack trace
}

// Error returns a one-line summary, "plugin chat: map_result: <cause>", fit
// for a response body; the full cause is in Err.
func (f *Fault) Error() string {
	cause, _, _ := strings.Cut(f.Err.Error(), "\n")
	return "plugin " + f.Plugin + ": " + f.Hook + ": " + cause
}

func (f *Fault) Unwrap() error { return f.Err }

// RunErrorCode is the error code the edge reports for a fault.
func (f *Fault) RunErrorCode() string { return "plugin_error" }
