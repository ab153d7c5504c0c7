package compat

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// Usage is the token accounting of one run, in the native result's terms.
type Usage struct {
	InputTokens, OutputTokens, TotalTokens int
}

// usageFrom reads a native usage object; a missing total is the sum of the
// parts, so a provider that reports only the parts still yields a consistent
// reply.
func usageFrom(r gjson.Result) Usage {
	u := Usage{
		InputTokens:  int(r.Get("input_tokens").Int()),
		OutputTokens: int(r.Get("output_tokens").Int()),
	}
	if t := r.Get("total_tokens"); t.Exists() {
		u.TotalTokens = int(t.Int())
	} else {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	return u
}

// appendChatUsage appends the chat.completion usage object. The details
// objects are optional in the schema, but common clients read
// prompt_tokens_details.cached_tokens without checking, so they are present.
func appendChatUsage(dst []byte, u Usage) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.InputTokens), 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.OutputTokens), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.TotalTokens), 10)
	return append(dst, `,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`...)
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
