package guestjson

// AppendCompact appends the JSON Value raw without the whitespace between
// tokens. Objects copied from a client body (schemas, metadata, tools) often
// arrive pretty-printed; compacting them keeps echoed replies and the stored
// native request small and byte-stable. raw must be valid JSON, which the
// host has checked.
func AppendCompact(dst []byte, raw string) []byte {
	start := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		case ' ', '\t', '\n', '\r':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...)
}
