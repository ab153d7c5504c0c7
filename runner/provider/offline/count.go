package offline

import "github.com/runedge/runedge/runner"

// CountInputTokens counts msgs as Generate reports input_tokens: the words
// of every message (instructions included, as the agent sends them). A
// pending text (runner.Message.SetContentPending: the host counts a
// request before its run decodes it for this provider) is counted
// decoded, in a copy.
func CountInputTokens(msgs []runner.Message) int {
	for i := range msgs {
		if msgs[i].ContentPending() {
			msgs = append([]runner.Message(nil), msgs...)
			runner.DecodeTexts(msgs)
			break
		}
	}
	return countWords(msgs)
}
