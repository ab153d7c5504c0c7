package compat

import "strconv"

// Usage is the token accounting of one run, in the native result's terms.
type Usage struct {
	InputTokens, OutputTokens, TotalTokens int
}

// appendResponseUsage appends the Response usage object; every key here is
// required by the Responses schema, including both details objects.
func appendResponseUsage(dst []byte, u Usage) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.InputTokens), 10)
	dst = append(dst, `,"input_tokens_details":{"cached_tokens":0,"cache_write_tokens":0},"output_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.OutputTokens), 10)
	dst = append(dst, `,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.TotalTokens), 10)
	return append(dst, '}')
}
