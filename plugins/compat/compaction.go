package compat

import (
	"strconv"

	"github.com/runedge/runedge/plugins/guestjson"
)

// Compaction items pass through the mapping as native messages of their
// own roles, which the host's compaction stage (filters/compaction) turns
// into what the agent sees before the run starts: the plugin holds no key
// and opens nothing.
const (
	// roleCompaction carries a compaction item's encrypted_content.
	roleCompaction = "compaction"
	// roleCompactionTrigger marks Codex's compaction_trigger item.
	roleCompactionTrigger = "compaction_trigger"
)

// appendCompactionItem appends input item i of type compaction (enc is
// its encrypted_content) or compaction_trigger as a native message
// {"role":…,"content":…,"ref_index":i}; ok is false for other types.
func appendCompactionItem(dst []byte, typ, enc value, i int) (out []byte, ok bool, err error) {
	role := ""
	switch {
	case typ.Is("compaction"):
		if !enc.IsString() || enc == `""` {
			return dst, true, invalid(indexed("input", i)+".encrypted_content", "a compaction item needs the encrypted_content this service gave it")
		}
		role = roleCompaction
	case typ.Is("compaction_trigger"):
		role = roleCompactionTrigger
	default:
		return dst, false, nil
	}
	dst = append(dst, `{"role":"`+role+`","content":"`...)
	if role == roleCompaction {
		dst = guestjson.AppendStringValue(dst, enc)
	}
	dst = append(dst, `","ref_index":`...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	return append(dst, '}'), true, nil
}
