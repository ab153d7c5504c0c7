package offline

import "github.com/runedge/runedge/runner"

// CountInputTokens counts msgs as Generate reports input_tokens: the words
// of every message (instructions included, as the agent sends them).
func CountInputTokens(msgs []runner.Message) int { return countWords(msgs) }
