package abi

import (
	"errors"
	"fmt"

	"github.com/tidwall/gjson"

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

// DecodeInputError reads a status-1 body, filling in the default code.
func DecodeInputError(body []byte) (InputError, error) {
	if !gjson.ValidBytes(body) {
		return InputError{}, errors.New("status 1 with a malformed error body: not JSON")
	}
	e := gjson.GetBytes(body, "error")
	if !e.IsObject() {
		return InputError{}, errors.New(`status 1 without "error.message" in its body`)
	}
	var ie InputError
	for _, f := range []struct {
		dst  *string
		name string
	}{{&ie.Message, "message"}, {&ie.Param, "param"}, {&ie.Code, "code"}} {
		v := e.Get(f.name)
		switch v.Type {
		case gjson.String:
			*f.dst = v.Str
		case gjson.Null:
		default:
			if v.Exists() {
				return InputError{}, fmt.Errorf("status 1 with a malformed error body: error.%s is not a string", f.name)
			}
		}
	}
	if ie.Message == "" {
		return InputError{}, errors.New(`status 1 without "error.message" in its body`)
	}
	if ie.Code == "" {
		ie.Code = DefaultInputErrorCode
	}
	return ie, nil
}
