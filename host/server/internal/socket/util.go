package socket

import (
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
)

// Run headers the chain sets on a turn's Writer.
const (
	headerSessionID = filters.HeaderSessionID
	headerThreadID  = filters.HeaderThreadID
)

// completed reports whether a terminal event is response.completed.
func completed(terminal []byte) bool {
	return gjson.GetBytes(terminal, "type").Str == "response.completed"
}

func modelOf(body []byte) string { return gjson.GetBytes(body, "model").Str }

func quote(s string) string { return strconv.Quote(s) }
