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
type InputError struct {
	Message string
	Param   string
	Code    string
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
