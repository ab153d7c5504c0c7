// Package redact is the logic of the redact example plugin: it replaces
// e-mail addresses and phone numbers in assistant text, in whole replies
// (MapResult) and in streamed text (Stream), so that personal data the
// model repeats or invents never reaches the client.
//
// Detection is by shape, with no lists of names or numbering plans: it
// catches the common ways addresses and numbers are written and accepts a
// few false positives (see phone.go for the shapes). It is plain Go with no
// runedge host code, so it is tested natively and compiled into the plugin.
package redact

// Version is the plugin's version, reported to the host.
const Version = "1.0.0"

// What found addresses and numbers are replaced with. Neither contains "@"
// or digits, so redacting twice changes nothing.
const (
	EmailPlaceholder = "[redacted email]"
	PhonePlaceholder = "[redacted phone]"
)

// Text returns s with every e-mail address replaced by EmailPlaceholder and
// every phone number by PhonePlaceholder. It returns s itself when there is
// nothing to redact.
func Text(s string) string {
	var out []byte
	copied := 0
	replace := func(start, end int, placeholder string) {
		out = append(out, s[copied:start]...)
		out = append(out, placeholder...)
		copied = end
	}
	each(s, replace)
	if out == nil {
		return s
	}
	return string(append(out, s[copied:]...))
}

// each calls fn, in order, with the bounds of every address and number in s
// and the placeholder that replaces it. Addresses are found first, so that
// "+15551234567@sms.example.com" is one address rather than a number and a
// stray domain; numbers are looked for in the text between them.
func each(s string, fn func(start, end int, placeholder string)) {
	phone := func(start, end int) { fn(start, end, PhonePlaceholder) }
	from := 0
	for {
		start, end, ok := nextEmail(s, from)
		if !ok {
			eachPhone(s, from, len(s), phone)
			return
		}
		eachPhone(s, from, start, phone)
		fn(start, end, EmailPlaceholder)
		from = end
	}
}
