package sdk

import (
	"github.com/runedge/runedge/plugins/abi"
)

// Statuses returned by the hook exports (plugins/abi).
const (
	statusOK       int32 = abi.StatusOK
	statusInvalid  int32 = abi.StatusInvalid
	statusInternal int32 = abi.StatusFailed
)

// callMap runs a mapping hook and turns its outcome into an ABI status and the
// bytes to expose as the call's output.
func callMap(fn func([]byte) ([]byte, error), in []byte) (int32, []byte) {
	if fn == nil {
		return statusInternal, []byte("hook not registered")
	}
	var out []byte
	status, msg := guard(func() error {
		var err error
		out, err = fn(in)
		return err
	})
	if status != statusOK {
		return status, msg
	}
	return statusOK, out
}

// callSelfTest runs the self-test hook and turns its outcome into an ABI
// status and output.
func callSelfTest(fn func() error) (int32, []byte) {
	if fn == nil {
		return statusInternal, []byte("hook not registered")
	}
	return guard(fn)
}

// guard runs fn and maps its error, or a panic, to a status and output. A
// panic becomes an internal error rather than a crash of the guest runtime,
// which would lose the message; the host discards the instance either way.
func guard(fn func() error) (status int32, out []byte) {
	defer func() {
		if r := recover(); r != nil {
			status, out = statusInternal, appendPanic(nil, r)
		}
	}()
	err := fn()
	if err == nil {
		return statusOK, nil
	}
	if ie, ok := asInvalidInput(err); ok {
		return statusInvalid, invalidInputBody(ie.message, ie.param, ie.code)
	}
	return statusInternal, []byte(err.Error())
}

// invalidInputBody renders the status-1 output with the ABI's codec; empty
// param and code are left out.
func invalidInputBody(message, param, code string) []byte {
	return abi.InputError{Message: message, Param: param, Code: code}.AppendJSON(nil)
}
