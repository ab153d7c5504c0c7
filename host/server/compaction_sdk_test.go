package server

import (
	"context"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// openai-go, unchanged, compacts a two-turn conversation
// (client.Responses.Compact with previous_response_id), reads the
// CompactedResponse, and starts a store:false chain from its output: the
// agent receives the summary.
func TestCompactWithSDK(t *testing.T) {
	h := start(t, compactKeys(t, "k1"))
	c := tenantClient(h, "t1")
	r1, _ := newResponse(t, c, responses.ResponseNewParams{Input: text("my name is Ada")})
	r2, _ := newResponse(t, c, responses.ResponseNewParams{Input: text("I like tea"), PreviousResponseID: openai.String(r1.ID)})

	cr, err := c.Responses.Compact(context.Background(), responses.ResponseCompactParams{
		Model: "service", PreviousResponseID: openai.String(r2.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if cr.Object != "response.compaction" || len(cr.Output) != 3 || cr.Usage.TotalTokens == 0 {
		t.Fatalf("compacted response: %s", cr.RawJSON())
	}
	last := cr.Output[len(cr.Output)-1]
	if last.Type != "compaction" || last.EncryptedContent == "" {
		t.Fatalf("last output item: %s", last.RawJSON())
	}

	next, _ := newResponse(t, c, responses.ResponseNewParams{Store: openai.Bool(false),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfCompaction(last.EncryptedContent),
			responses.ResponseInputItemParamOfMessage("what now", responses.EasyInputMessageRoleUser),
		}}})
	if got, want := next.OutputText(), "(earlier: Summary: my name is Ada | I like tea)"; !strings.Contains(got, want) {
		t.Errorf("the agent answered %q, want it to name %q", got, want)
	}
}
