package filtertest

import (
	"strings"
	"testing"
)

// Event is one SSE frame: an event (Name may be empty, Data its data) or a
// comment (Comment set, the text after ": ").
type Event struct {
	ID, Name, Data string
	Comment        string
}

// SSE splits an SSE body into its frames, in order. It fails the test on a
// frame that is not one line per field (a data line holding a newline of
// its own would break every SSE client), or on a body that does not end
// with a blank line.
func SSE(tb testing.TB, body string) []Event {
	tb.Helper()
	if body == "" {
		return nil
	}
	if !strings.HasSuffix(body, "\n\n") {
		tb.Fatalf("SSE body does not end with a blank line: %q", tail(body))
	}
	var evs []Event
	for _, frame := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		var ev Event
		for _, line := range strings.Split(frame, "\n") {
			switch {
			case strings.HasPrefix(line, ": "):
				ev.Comment = line[2:]
			case strings.HasPrefix(line, "id: "):
				ev.ID = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.Name = line[7:]
			case strings.HasPrefix(line, "data: ") && ev.Data == "":
				ev.Data = line[6:]
			default:
				tb.Fatalf("SSE frame with an unexpected line %q: %q", line, frame)
			}
		}
		evs = append(evs, ev)
	}
	return evs
}

func tail(s string) string {
	if len(s) > 80 {
		return "…" + s[len(s)-80:]
	}
	return s
}
