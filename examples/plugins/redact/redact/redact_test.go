package redact

import (
	"strings"
	"testing"
)

const (
	E = EmailPlaceholder
	P = PhonePlaceholder
)

// textCases are inputs and their redaction. The stream tests cut each of
// them at every boundary, so they double as the streaming table.
var textCases = []struct{ in, want string }{
	// addresses
	{"write to jane@example.com", "write to " + E},
	{"jane.doe+news@mail.example.co.uk, thanks", E + ", thanks"},
	{"Mail jane@example.com.", "Mail " + E + "."},
	{"<jane_doe@example.org>", "<" + E + ">"},
	{"(ops-team@corp-mail.example.net)", "(" + E + ")"},
	{"“jane@example.com”", "“" + E + "”"},
	{"jürgen@müller.de schrieb", E + " schrieb"},
	{"+15551234567@sms.example.com", E},
	{"a@b.co and c@d.io", E + " and " + E},
	{"mail:jane@example.com", "mail:" + E},
	{"...jane@example.com", "..." + E},
	// not addresses
	{"@handle on social", "@handle on social"},
	{"user@localhost", "user@localhost"},
	{"pip install pkg==1.0 @ 3.2", "pip install pkg==1.0 @ 3.2"},
	{"a@1.2.3.4", "a@1.2.3.4"},
	{"x@y.c", "x@y.c"},
	{"x@-bad.com", "x@-bad.com"},
	{strings.Repeat("a", 65) + "@example.com", strings.Repeat("a", 65) + "@example.com"},
	// phone numbers
	{"call +1 (555) 123-4567 now", "call " + P + " now"},
	{"call 555-123-4567.", "call " + P + "."},
	{"(555) 123-4567", P},
	{"(555)123-4567", P},
	{"555.123.4567", P},
	{"+44 20 7946 0958", P},
	{"020 7946 0958", P},
	{"01 23 45 67 89", P},
	{"+4930123456", P},
	{"tel: 555-1234.", "tel: " + P + "."},
	{"numbers 555-123-4567, 555-765-4321", "numbers " + P + ", " + P},
	{"numbers 555-123-4567 555-765-4321", "numbers " + P + " " + P},
	{"(555) 123-4567 (555) 765-4321", P + " " + P},
	{"+44 20 7946 0958 +44 20 7946 0959", P + " " + P},
	{"line one\n555 123 4567\nline three", "line one\n" + P + "\nline three"},
	// not phone numbers
	{"created 1700000000", "created 1700000000"},
	{"on 2024-01-15 at noon", "on 2024-01-15 at noon"},
	{"pi is 3.14159265", "pi is 3.14159265"},
	{"host 192.168.100.200", "host 192.168.100.200"},
	{"in 2023 1500 people", "in 2023 1500 people"},
	{"call 555-1234x", "call 555-1234x"},
	{"id5551234567", "id5551234567"},
	{"1,234,567 units", "1,234,567 units"},
	{"short 123-456", "short 123-456"},
	{"C++ and (x) + 1", "C++ and (x) + 1"},
	// neither
	{"", ""},
	{"plain text, nothing to see.", "plain text, nothing to see."},
}

func TestText(t *testing.T) {
	for _, c := range textCases {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// Redacting twice must change nothing: the placeholders must not look like
// what they replace.
func TestTextIsIdempotent(t *testing.T) {
	for _, c := range textCases {
		if got := Text(c.want); got != c.want {
			t.Errorf("Text(%q) = %q, want it unchanged", c.want, got)
		}
	}
}

// Long runs must not make the scanner quadratic or trip it up; this also
// pins that a lone "@" among many does not match.
func TestTextLongInput(t *testing.T) {
	in := strings.Repeat("a@", 50000) + " jane@example.com"
	want := strings.Repeat("a@", 50000) + " " + E
	if got := Text(in); got != want {
		t.Errorf("long input: got %q…", got[len(got)-40:])
	}
}
