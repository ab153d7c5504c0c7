package compat

import (
	"strconv"

	"github.com/runedge/runedge/plugins/abi"
)

// CodeInvalidBody is the OpenAI error code for a body of the wrong shape.
const CodeInvalidBody = "invalid_body"

// InputError is a fault in the client's body (the ABI's one input-error
// type). The host (or the plugin SDK) renders it as a 400
// invalid_request_error with Code and Param, so Message is written for the
// person who sent the request. It never quotes values from the body:
// messages must stay small and must not hold references into the input.
type InputError = abi.InputError

// invalid returns an invalid_body InputError for param.
func invalid(param, message string) error {
	return &InputError{Message: message, Param: param, Code: CodeInvalidBody}
}

// indexed names the i-th element of a list parameter, e.g. "messages[2]".
// It only runs on the error path.
func indexed(list string, i int) string {
	return list + "[" + strconv.Itoa(i) + "]"
}
