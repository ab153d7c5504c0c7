package compaction

import (
	"context"
	"net/http"
	"strconv"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/internal/jsonfast"
	"github.com/runedge/runedge/internal/respjson"
	"github.com/runedge/runedge/runner"
)

// Reply is the terminal handler of the compact chain: it waits for the
// compaction run, seals the agent's summary and answers the
// response.compaction object.
type Reply struct{ keys *Keys }

// NewReply returns the terminal handler that seals with keys.
func NewReply(keys *Keys) *Reply { return &Reply{keys: keys} }

var _ filters.Handler = (*Reply)(nil)

// Handle answers x once its run has ended, and records the outcome.
func (r *Reply) Handle(ctx context.Context, x *filters.Exchange) error {
	for range x.Run.Events() {
	}
	res, err := x.Run.Wait()
	if err != nil {
		return x.End.Finish(nil, err)
	}
	body := object(x.Run.Run(), x.Run.Input(), r.keys.Seal(x.Identity.TenantID, res.Text), res.Usage)
	if err := x.End.Finish(&res, nil); err != nil {
		return err
	}
	if err := x.Reply.JSON(http.StatusOK, body); err != nil {
		return &filters.ClientGoneError{Err: err}
	}
	return nil
}

// object is the reply of run, the response.compaction object (OpenAI's
// CompactResource): the user messages the agent was given, then one
// compaction item, each written by internal/respjson. Ids come from the
// run id's random part (resp_, cmp_; the user messages msg_<part>_<n>), so
// the native API's run and the reply name each other.
func object(run runner.Run, input []runner.Message, sealed string, u runner.Usage) []byte {
	b := make([]byte, 0, 256+len(sealed))
	b = append(b, `{"id":`...)
	b = jsonfast.AppendString(b, contract.ResponseID(run.ID))
	b = append(b, `,"object":"response.compaction","created_at":`...)
	b = strconv.AppendInt(b, run.CreatedAt, 10)
	b = append(b, `,"output":[`...)
	n := 0
	for _, m := range input {
		if m.Role != "user" || runner.IsCompactionPrompt(m) {
			continue
		}
		b = respjson.AppendMessage(b, respjson.Message{ID: contract.InputMessageID(run.ID, n), Role: "user",
			Parts: []respjson.Part{{Text: m.Content}}})
		b = append(b, ',')
		n++
	}
	b = respjson.AppendCompactionItem(b, contract.CompactionID(run.ID), sealed)
	b = append(b, `],"usage":`...)
	b = respjson.AppendUsage(b, u)
	return append(b, '}')
}
