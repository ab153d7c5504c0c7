package runner

import "strings"

// Compaction (POST /v1/responses/compact, filters/compaction) asks the
// agent for a summary of the conversation with one more user message, and
// hands a later run that summary as a system message. The two texts are
// fixed here so that a provider can recognise them (the offline provider
// summarises deterministically, and names the summary it was given).
const (
	// CompactionPrompt is the last user message of a compaction run.
	CompactionPrompt = "Summarise the conversation so far for your own later use: what the user asked and wants, what was decided, and what is still open. Answer with the summary only."
	// CompactedContextPrefix starts the system message that carries an
	// opened compaction item's summary to the agent.
	CompactedContextPrefix = "Summary of the earlier conversation: "
)

// IsCompactionPrompt reports whether m is the message that asks for a
// compaction summary.
func IsCompactionPrompt(m Message) bool {
	return m.Role == "user" && m.TextLen() == len(CompactionPrompt) && m.Text() == CompactionPrompt
}

// CompactedSummary returns the summary a message carries when it is an
// opened compaction item.
func CompactedSummary(m Message) (string, bool) {
	if m.Role != "system" {
		return "", false
	}
	return strings.CutPrefix(m.Text(), CompactedContextPrefix)
}
