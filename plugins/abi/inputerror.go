package abi

import (
	"github.com/runedge/runedge/plugins/guestjson"
)

// DefaultInputErrorCode is InputError.Code when the plugin gave none.
const DefaultInputErrorCode = "invalid_body"

// InputError is the output of a status-1 call:
//
//	{"error":{"message":"model is required","param":"model","code":"missing_model"}}
//
// Message is required; Param names the offending field and may be empty;
// Code defaults to DefaultInputErrorCode. Other fields are ignored.
//
// It is the plugin side's one input-error type: the default mapping
// (plugins/compat) returns it, the runtime hands it to the edge
// (plugins/runtime), both under their own name (aliases of this one).
type InputError struct {
	Message string
	Param   string
	Code    string
}

// Error is for logs: the message and the parameter it names.
func (e *InputError) Error() string {
	if e.Param == "" {
		return e.Message
	}
	return e.Message + " (param " + e.Param + ")"
}

// AppendJSON appends e as a status-1 body; an empty Param or Code is left
// out.
func (e InputError) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"error":{"message":`...)
	dst = guestjson.AppendString(dst, e.Message)
	if e.Param != "" {
		dst = append(dst, `,"param":`...)
		dst = guestjson.AppendString(dst, e.Param)
	}
	if e.Code != "" {
		dst = append(dst, `,"code":`...)
		dst = guestjson.AppendString(dst, e.Code)
	}
	return append(dst, "}}"...)
}
