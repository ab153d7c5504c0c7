package filters

import (
	"net/http"

	"github.com/runedge/runedge/filters/apierr"
)

// Run headers: sent on every reply that created a run; the session and
// thread headers are also read from requests that continue one.
const (
	HeaderSessionID     = "X-Service-Session-Id"
	HeaderRunID         = "X-Service-Run-Id"
	HeaderThreadID      = "X-Service-Thread-Id"
	HeaderModelID       = "X-Service-Model-Id"
	HeaderRequestID     = "X-Service-Request-Id"
	HeaderCorrelationID = "X-Service-Correlation-Id"
)

// HeaderValue returns the single value of header name ("" when absent),
// refusing values that are repeated, longer than max bytes or contain a
// character outside ok with a 400 invalid_header: they would end up in the
// run history and in logs.
//
// name must be in canonical form (textproto.CanonicalMIMEHeaderKey), as
// every header constant here and in auth is (TestHeaderNamesAreCanonical):
// the header is read from the map as net/http filed it, without
// canonicalizing name again, a scan of it for each of the eight headers a
// request is asked for.
func HeaderValue(h http.Header, name string, max int, ok func(rune) bool) (string, error) {
	vs := h[name]
	switch len(vs) {
	case 0:
		return "", nil
	case 1:
	default:
		return "", apierr.InvalidHeader(name, "header %s must be sent once", name)
	}
	v := vs[0]
	if len(v) > max {
		return "", apierr.InvalidHeader(name, "header %s is longer than %d bytes", name, max)
	}
	for _, r := range v {
		if !ok(r) {
			return "", apierr.InvalidHeader(name, "header %s contains a character that is not allowed", name)
		}
	}
	return v, nil
}

// Printable allows printable text: no control characters, no invalid UTF-8.
func Printable(r rune) bool {
	return r >= 0x20 && r != 0x7f && r != 0xfffd && !(r >= 0x80 && r < 0xa0)
}

// IDChar allows the characters of ids and tenant names: ASCII letters,
// digits and . _ : -
func IDChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		r == '.' || r == '_' || r == ':' || r == '-'
}
