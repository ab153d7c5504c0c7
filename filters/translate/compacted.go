package translate

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/framing"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/internal/respjson"
	"github.com/runedge/runedge/runner"
)

// A Responses turn that compacted (x.Turn.Compaction, set by filters/compaction)
// carries the compaction item first in its output, in the JSON reply, the
// stored object and the stream alike. When the turn is the compaction
// (compaction_trigger), the item is the output's only one: the agent's
// answer is the summary, sealed into it, and never sent in clear.

// compactionItem is the item of x's compaction: the one made before the
// turn, or the turn's own answer sealed (its id from the run's, cmp_…).
func compactionItem(x *filters.Exchange, ids replyIDs, res *runner.Result) []byte {
	c := x.Turn.Compacted()
	if c.Seal == nil {
		return c.Item
	}
	return respjson.AppendCompactionItem(nil, contract.CompactionID(ids.run), c.Seal(res.Text))
}

// withCompaction puts x's compaction item into the final Response body:
// first in its output, or (the turn is the compaction) as its output,
// with no output_text.
func withCompaction(body []byte, x *filters.Exchange, ids replyIDs, res *runner.Result) ([]byte, error) {
	c := x.Turn.Compacted()
	if c == nil {
		return body, nil
	}
	item := compactionItem(x, ids, res)
	out := make([]byte, 0, len(item)+len(body))
	out = append(append(append(out, '['), item...), ']')
	if c.Seal == nil {
		if rest := strings.TrimSpace(gjson.GetBytes(body, "output").Raw); len(rest) > 2 {
			out = append(append(out[:len(out)-1], ','), rest[1:]...)
		}
	} else {
		var err error
		if body, err = sjson.SetBytes(body, "output_text", ""); err != nil {
			return nil, err
		}
	}
	body, err := withCompactionUsage(body, c.Usage)
	if err != nil {
		return nil, err
	}
	return sjson.SetRawBytes(body, "output", out)
}

// withCompactionUsage adds the usage of the compaction run a turn started
// (context_management) to the turn's Response usage: the turn cost both.
// Each run's record keeps its own (docs/api.md "Compaction").
func withCompactionUsage(body []byte, u runner.Usage) ([]byte, error) {
	if u == (runner.Usage{}) || !gjson.GetBytes(body, "usage").IsObject() {
		return body, nil
	}
	total := u.TotalTokens
	if total == 0 {
		total = u.InputTokens + u.OutputTokens
	}
	var err error
	for _, f := range []struct {
		path string
		n    int
	}{{"usage.input_tokens", u.InputTokens}, {"usage.output_tokens", u.OutputTokens}, {"usage.total_tokens", total}} {
		if body, err = sjson.SetBytes(body, f.path, gjson.GetBytes(body, f.path).Int()+int64(f.n)); err != nil {
			return nil, err
		}
	}
	return body, nil
}

// compactionEvents sends the compaction item's two events at output 0:
// at the stream's start when it was made before the turn, at its end when
// the turn is the compaction.
func (e *responseEvents) compactionEvents(item []byte) error {
	for _, done := range []bool{false, true} {
		if err := e.send(framing.ItemEvent(done), e.rs.AppendItemEvent(e.buf[:0], e.out.nextSeq(), 0, done, item)); err != nil {
			return err
		}
	}
	return nil
}

// withSealedReasoning gives the reasoning item of the final Response body
// (the one the mapping made of the upstream's reasoning, id rs_<message
// id>) its encrypted_content: res.Reasoning sealed for the tenant, when
// the turn asked for it (include reasoning.encrypted_content,
// x.Turn.SealReasoning). The item keeps what the mapping wrote of it; a
// later turn that sends it back gives the upstream the reasoning again
// (filters/compaction). Without the include, or without reasoning, the
// body is unchanged.
func withSealedReasoning(body []byte, x *filters.Exchange, ids replyIDs, res *runner.Result) ([]byte, error) {
	seal := x.Turn.ReasoningSealer()
	if seal == nil || res.Reasoning == "" {
		return body, nil
	}
	id := contract.ReasoningID(ids.message)
	at, n := -1, 0
	var item gjson.Result
	gjson.GetBytes(body, "output").ForEach(func(_, it gjson.Result) bool {
		if it.Get("type").Str == "reasoning" && it.Get("id").Str == id {
			at, item = n, it
			return false
		}
		n++
		return true
	})
	if at < 0 {
		return body, nil // the mapping (or a result plugin) left it out
	}
	r := respjson.Reasoning{EncryptedContent: seal(res.Reasoning)}
	for _, p := range item.Get("summary.#.text").Array() {
		r.Summary = append(r.Summary, p.Str)
	}
	for _, p := range item.Get("content.#.text").Array() {
		r.Content = append(r.Content, p.Str)
	}
	return sjson.SetRawBytes(body, "output."+strconv.Itoa(at), respjson.AppendReasoning(nil, id, r))
}
