package jsonfast

import "encoding/json"

// AppendString appends s as json.Marshal writes it: a string of printable
// ASCII other than what it escapes (" \ < > &) as it is, any other through
// json.Marshal itself. Bodies written by hand with it match json.Marshal
// byte for byte (the callers' differential tests hold them to that).
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // cannot fail for a string
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
