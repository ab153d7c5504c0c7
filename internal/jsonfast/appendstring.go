package jsonfast

import "github.com/runedge/runedge/plugins/guestjson"

// AppendString appends s as json.Marshal writes it: quoted, with " and \
// escaped by a backslash, \b \f \n \r \t by their short forms, other
// control bytes and the HTML characters < > & as \u00XX, U+2028 and U+2029
// as \u2028 and \u2029, and each byte that is not part of valid UTF-8 as
// \ufffd. Bodies written by hand with it match json.Marshal byte for byte
// (FuzzAppendString, and the callers' differential tests).
func AppendString(b []byte, s string) []byte {
	return guestjson.AppendStringHTMLSafe(b, s)
}

// AppendStringPlain is AppendString with the HTML characters < > & left
// as they are: for a body that only a JSON reader reads (an upstream's
// request), where escaping them spends six bytes and a branch on each
// for the same text.
func AppendStringPlain(b []byte, s string) []byte {
	return guestjson.AppendString(b, s)
}
