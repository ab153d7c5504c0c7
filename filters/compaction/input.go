package compaction

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// Input is the stage before model on the compact endpoint: input
// is optional there (previous_response_id alone names what to compact),
// while a Responses body needs one. A body without input (or with null)
// gets the compaction prompt as its input, so the mapping sees a valid
// Responses request and the compaction stage finds its prompt in place.
type Input struct{}

var _ filters.Stage = Input{}

// Name is contract.StageCompactInput ("compact-input").
func (Input) Name() string { return contract.StageCompactInput }

// promptInput is the input member added to a body without one; a later
// member wins over an earlier "input":null in the mapping.
var promptInput = func() []byte {
	b, _ := json.Marshal(map[string]any{"input": []runner.Message{{Role: "user", Content: runner.CompactionPrompt}}})
	return b[1 : len(b)-1]
}()

// Handle adds the input member when the body has none, then calls next.
// A body that is not a JSON object is left for the model stage to refuse.
func (Input) Handle(ctx context.Context, x *filters.Exchange, next filters.Handler) error {
	if v := gjson.GetBytes(x.Body, "input"); !v.Exists() || v.Type == gjson.Null {
		body := bytes.TrimRight(x.Body, " \t\r\n")
		if n := len(body); n > 0 && body[n-1] == '}' {
			out := append([]byte(nil), body[:n-1]...)
			if len(bytes.TrimSpace(out)) > 1 {
				out = append(out, ',')
			}
			out = append(out, promptInput...)
			x.Body = append(out, '}')
		}
	}
	return next.Handle(ctx, x)
}
