package offline

import (
	"strings"

	"github.com/runedge/runedge/runner"
)

// compactionAnswer is the offline model's answer to a compaction run (the
// last user message is runner.CompactionPrompt): "Summary: " followed by
// the summaries it was handed and the user messages before the prompt, in
// order, joined by " | ". Deterministic, and it keeps every user turn, so
// a test can see a compacted conversation reach a later run.
func compactionAnswer(msgs []runner.Message) (string, bool) {
	if len(msgs) == 0 || !runner.IsCompactionPrompt(msgs[len(msgs)-1]) {
		return "", false
	}
	var parts []string
	for _, m := range msgs[:len(msgs)-1] {
		if s, ok := runner.CompactedSummary(m); ok {
			parts = append(parts, strings.TrimPrefix(s, "Summary: "))
		} else if m.Role == "user" {
			parts = append(parts, strings.Join(strings.Fields(m.Content), " "))
		}
	}
	return "Summary: " + strings.Join(parts, " | "), true
}

// earlierSummary is the summary of an opened compaction item in the
// conversation, "" when there is none: the offline model names it in its
// echo ("You said: … (earlier: <summary>)"), so a test can see it arrive.
func earlierSummary(msgs []runner.Message) string {
	var last string
	for _, m := range msgs {
		if s, ok := runner.CompactedSummary(m); ok {
			last = s
		}
	}
	return strings.Join(strings.Fields(last), " ")
}
