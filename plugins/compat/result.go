package compat

import (
	"strconv"

	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/guestjson"
)

// resultInput is a MapResult input as the ABI's codec reads it
// (abi.ViewResultInput): values as written, so text is copied, not decoded.
type resultInput struct{ abi.ResultView }

// finish returns the finish reason, "stop" when the runner gave none.
func (r *resultInput) finish() value {
	if r.FinishReason.IsString() && r.FinishReason != `""` {
		return r.FinishReason
	}
	return `"stop"`
}

// appendText appends the result text as a JSON string.
func (r *resultInput) appendText(dst []byte) []byte {
	return appendString(dst, r.Text)
}

// appendString appends a string value as a JSON string, "" when v is not one.
func appendString(dst []byte, v value) []byte {
	dst = append(dst, '"')
	if v.IsString() {
		dst = guestjson.AppendStringValue(dst, v)
	}
	return append(dst, '"')
}

// appendCreated appends the creation time as a whole number of seconds.
func (r *resultInput) appendCreated(dst []byte) []byte {
	f, _ := r.Created.Num()
	return strconv.AppendInt(dst, int64(f), 10)
}

// readUsage reads the usage in compat's terms.
func (r *resultInput) readUsage() Usage {
	return r.ReadUsage()
}
