package socket

import (
	"bytes"
	"strconv"

	"github.com/tidwall/gjson"
)

// completed reports whether a terminal event is response.completed.
func completed(terminal []byte) bool {
	return string(eventType(terminal)) == "response.completed"
}

func modelOf(body []byte) string { return gjson.GetBytes(body, "model").Str }

func quote(s string) string { return strconv.Quote(s) }

// eventType is the type of a server event. The chain writes it first
// ({"type":"…",…}), so it is read there without parsing the event, which
// every event of a turn pays; any other event is parsed.
func eventType(ev []byte) []byte {
	if rest, ok := bytes.CutPrefix(ev, []byte(`{"type":"`)); ok {
		if i := bytes.IndexByte(rest, '"'); i >= 0 && bytes.IndexByte(rest[:i], '\\') < 0 {
			return rest[:i]
		}
	}
	return []byte(gjson.GetBytes(ev, "type").Str)
}
