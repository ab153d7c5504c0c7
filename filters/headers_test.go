package filters_test

import (
	"bufio"
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/auth"
)

// HeaderValue reads its header from the map without canonicalizing its
// name: every name it is given must be canonical already, or the header
// would never be found.
func TestHeaderNamesAreCanonical(t *testing.T) {
	for _, name := range []string{
		filters.HeaderSessionID, filters.HeaderRunID, filters.HeaderThreadID, filters.HeaderModelID,
		filters.HeaderRequestID, filters.HeaderCorrelationID,
		auth.HeaderTenantID, auth.HeaderActorID, auth.HeaderActorType, auth.HeaderActorName,
	} {
		if c := textproto.CanonicalMIMEHeaderKey(name); c != name {
			t.Errorf("%q is not canonical (%q): HeaderValue would not find it", name, c)
		}
	}
}

// A header sent in any case is found, once, twice or not at all, as a
// server parsed it.
func TestHeaderValueReadsTheParsedHeader(t *testing.T) {
	for _, c := range []struct {
		sent    []string
		want    string
		refused bool
	}{
		{nil, "", false},
		{[]string{"x-service-session-id: sess_1"}, "sess_1", false},
		{[]string{"X-SERVICE-SESSION-ID: sess_2"}, "sess_2", false},
		{[]string{"x-service-session-id: a", "X-Service-Session-Id: b"}, "", true},
	} {
		raw := "POST / HTTP/1.1\r\nHost: x\r\n" + strings.Join(append(c.sent, ""), "\r\n") + "\r\n"
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := filters.HeaderValue(r.Header, filters.HeaderSessionID, 128, filters.IDChar)
		if got != c.want || (err != nil) != c.refused {
			t.Fatalf("%q: %q, %v; want %q, refused %v", c.sent, got, err, c.want, c.refused)
		}
	}
}

// BenchmarkHeaderValue is the eight headers a request is asked for
// (auth's tenant and actor, the run stage's ids) in the headers an OpenAI
// SDK sends, none of them among those.
func BenchmarkHeaderValue(b *testing.B) {
	h := http.Header{}
	for _, kv := range [][2]string{
		{"Authorization", "Bearer sk-test"}, {"Content-Type", "application/json"}, {"Accept", "application/json"},
		{"User-Agent", "OpenAI/Python 1.99.0"}, {"X-Stainless-Lang", "python"}, {"X-Stainless-Package-Version", "1.99.0"},
		{"X-Stainless-Os", "Linux"}, {"X-Stainless-Arch", "x64"}, {"X-Stainless-Runtime", "CPython"}, {"X-Stainless-Retry-Count", "0"},
	} {
		h.Set(kv[0], kv[1])
	}
	names := []string{auth.HeaderTenantID, auth.HeaderActorID, auth.HeaderActorType, auth.HeaderActorName,
		filters.HeaderSessionID, filters.HeaderThreadID, filters.HeaderRequestID, filters.HeaderCorrelationID}
	for b.Loop() {
		for _, n := range names {
			if _, err := filters.HeaderValue(h, n, 256, filters.Printable); err != nil {
				b.Fatal(err)
			}
		}
	}
}
