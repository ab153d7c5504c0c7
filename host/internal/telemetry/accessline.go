package telemetry

import (
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// The access line appended by hand, byte for byte what slog's TextHandler
// or JSONHandler (no options, no attributes added) writes for the record
// AccessLog would make: about half the line's CPU went to slog's generic
// path (the record's attributes past its five inline ones, each value's
// kind switch, a handler state from a pool). TestAccessLineIsSlogs holds
// both formats equal to slog's over odd values; a value this file does
// not format as slog would (no time, a year past 9999, a float
// json.Marshal writes with an exponent) sends the line through slog
// instead.

// lineFormat is how a LogOutput's own handler writes an access line: by
// hand in the format of the slog handler it was made with, or through
// that handler (lineSlog: a handler of the caller's, or one with
// attributes or a group added).
type lineFormat uint8

const (
	lineSlog lineFormat = iota
	lineText
	lineJSON
)

// accessFields are an access line's values after its time, level and
// message, in AccessLog's order.
type accessFields struct {
	method, path, endpoint string
	status                 int
	durationMS             float64
	runID, tenant          string
	bytes                  int64
	stream                 bool
}

var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// appendAccessLine appends the line (with its newline) in format f, or
// returns ok false, and b as it was, for a value it leaves to slog.
func appendAccessLine(b []byte, f lineFormat, t time.Time, a *accessFields) (_ []byte, ok bool) {
	t = t.Round(0) // as slog's handlers: no monotonic reading
	if y := t.Year(); y < 0 || y >= 10000 || t.IsZero() {
		return b, false
	}
	if f == lineJSON {
		// encoding/json writes a float of magnitude under 1e-6 (but 0) or
		// from 1e21 with an exponent; strconv's 'f' is the rest.
		if d := a.durationMS; d != 0 && (d < 1e-6 || d >= 1e21) {
			return b, false
		}
		b = append(b, `{"time":"`...)
		b = t.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","level":"INFO","msg":"request","method":`...)
		b = appendJSONString(b, a.method)
		b = append(b, `,"path":`...)
		b = appendJSONString(b, a.path)
		b = append(b, `,"endpoint":`...)
		b = appendJSONString(b, a.endpoint)
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(a.status), 10)
		b = append(b, `,"duration_ms":`...)
		b = strconv.AppendFloat(b, a.durationMS, 'f', -1, 64)
		b = append(b, `,"run_id":`...)
		b = appendJSONString(b, a.runID)
		b = append(b, `,"tenant":`...)
		b = appendJSONString(b, a.tenant)
		b = append(b, `,"bytes":`...)
		b = strconv.AppendInt(b, a.bytes, 10)
		b = append(b, `,"stream":`...)
		b = strconv.AppendBool(b, a.stream)
		return append(b, "}\n"...), true
	}
	b = append(b, "time="...)
	b = appendRFC3339Millis(b, t)
	b = append(b, " level=INFO msg=request method="...)
	b = appendTextString(b, a.method)
	b = append(b, " path="...)
	b = appendTextString(b, a.path)
	b = append(b, " endpoint="...)
	b = appendTextString(b, a.endpoint)
	b = append(b, " status="...)
	b = strconv.AppendInt(b, int64(a.status), 10)
	b = append(b, " duration_ms="...)
	b = strconv.AppendFloat(b, a.durationMS, 'g', -1, 64)
	b = append(b, " run_id="...)
	b = appendTextString(b, a.runID)
	b = append(b, " tenant="...)
	b = appendTextString(b, a.tenant)
	b = append(b, " bytes="...)
	b = strconv.AppendInt(b, a.bytes, 10)
	b = append(b, " stream="...)
	b = strconv.AppendBool(b, a.stream)
	return append(b, '\n'), true
}

// appendRFC3339Millis is slog's text time: RFC 3339 with milliseconds,
// truncated.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...) // drop the 4th digit
}

// safeByte reports whether an ASCII byte goes into a JSON string as it
// is (encoding/json's safeSet).
func safeByte(c byte) bool { return c >= 0x20 && c != '"' && c != '\\' }

// appendTextString is slog's text value of a string: as it is, or quoted
// (strconv.Quote) when it is empty or holds a space, '=', a quote, a
// control or unprintable character or invalid UTF-8.
func appendTextString(b []byte, s string) []byte {
	if textNeedsQuoting(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

func textNeedsQuoting(s string) bool {
	if len(s) == 0 {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c != '\\' && (c == ' ' || c == '=' || !safeByte(c)) {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// appendJSONString is slog's JSON string: quoted, HTML left alone,
// invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if safeByte(c) {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
