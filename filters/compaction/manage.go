package compaction

import (
	"fmt"
	"math"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
)

// MinThreshold is the smallest compact_threshold OpenAI's OpenAPI
// description allows (ContextManagementParam: minimum 1000).
const MinThreshold = 1000

// threshold reads a Responses body's context_management: the
// compact_threshold of its compaction entry, or 0 when it has none (absent
// or null). The shape is OpenAI's: a non-empty array of {type,
// compact_threshold}; compaction is the only type, given once. A compaction
// entry without a threshold is refused rather than given one: the server's
// default would be a share of the model's context window, which runedge
// does not know (as with truncation "auto").
func threshold(x *filters.Exchange) (int, error) {
	v := x.Member("context_management")
	if !v.Exists() || v.Type == gjson.Null {
		return 0, nil
	}
	if !v.IsArray() {
		return 0, apierr.InvalidBody("context_management", "context_management must be an array of context management entries")
	}
	entries := v.Array()
	if len(entries) == 0 {
		return 0, apierr.InvalidBody("context_management", "context_management must list at least one entry (or be null)")
	}
	n := 0
	for i, e := range entries {
		p := fmt.Sprintf("context_management[%d]", i)
		if !e.IsObject() {
			return 0, apierr.InvalidBody(p, "%s must be an object {\"type\":\"compaction\",\"compact_threshold\":N}", p)
		}
		if t := e.Get("type"); t.Type != gjson.String || t.Str != "compaction" {
			return 0, apierr.InvalidBody(p+".type", "%s.type must be \"compaction\", the only context management type", p)
		}
		if n > 0 {
			return 0, apierr.InvalidBody(p, "%s: compaction is configured more than once", p)
		}
		th := e.Get("compact_threshold")
		if !th.Exists() || th.Type == gjson.Null {
			return 0, unsupported(p+".compact_threshold",
				"compact_threshold is required: this service does not know the model's context window to choose one")
		}
		if th.Type != gjson.Number || th.Num != math.Trunc(th.Num) || th.Num < MinThreshold || th.Num > math.MaxInt32 {
			return 0, apierr.InvalidBody(p+".compact_threshold", "%s.compact_threshold must be an integer of at least %d", p, MinThreshold)
		}
		n = int(th.Num)
	}
	return n, nil
}
