package contract

import "strconv"

// Paging is the ?limit= of one list endpoint: how many entries a page
// holds when the client does not say, and at most.
type Paging struct {
	Default, Max int
}

// The list endpoints' paging, as OpenAI's lists take it.
var (
	// RunsPaging is GET /runner/v1/runs (and the store's ListRuns).
	RunsPaging = Paging{Default: 20, Max: 100}
	// InputItemsPaging is GET /v1/responses/{id}/input_items.
	InputItemsPaging = Paging{Default: 20, Max: 100}
	// ConversationItemsPaging is GET /v1/conversations/{id}/items.
	ConversationItemsPaging = Paging{Default: 20, Max: 100}
)

// MaxItemsPerCall bounds the items one call that creates a conversation or
// adds items to one carries, as OpenAI's API does.
const MaxItemsPerCall = 20

// Limit reads a ?limit= value: Default for "", the number when it is an
// integer from 1 to Max; ok is false otherwise (a 400 naming limit, with
// Refusal as its message).
func (p Paging) Limit(v string) (n int, ok bool) {
	if v == "" {
		return p.Default, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > p.Max {
		return 0, false
	}
	return n, true
}

// Clamp bounds a page size a caller already holds: Default for 0 or less,
// at most Max.
func (p Paging) Clamp(n int) int {
	if n <= 0 {
		return p.Default
	}
	return min(n, p.Max)
}

// Refusal is the message of the 400 for a limit Limit refuses.
func (p Paging) Refusal() string {
	return "limit must be an integer from 1 to " + strconv.Itoa(p.Max)
}
