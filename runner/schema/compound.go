package schema

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// object builds every declared property, in declaration order (only the
// required ones once the branch is deep in a recursive schema), then any
// required names that are not declared, then filler properties up to
// minProperties when additional properties are allowed.
func (g *generator) object(buf *bytes.Buffer, sch *object, st state) error {
	props, _ := sch.vals["properties"].(*object)
	required := map[string]bool{}
	var requiredOrder []string
	if req, ok := sch.vals["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok && !required[s] {
				required[s] = true
				requiredOrder = append(requiredOrder, s)
			}
		}
	}
	var keys []string
	if props != nil {
		for _, k := range props.keys {
			if !st.minimal() || required[k] {
				keys = append(keys, k)
			}
		}
	}
	for _, r := range requiredOrder {
		if _, ok := props.get(r); !ok {
			keys = append(keys, r)
		}
	}
	additional, hasAdditional := sch.vals["additionalProperties"]
	if min := intKeyword(sch, "minProperties", 0); additional != false {
		if min > MaxGenerated/8 { // each filler property takes more than 8 bytes
			return errTooLarge
		}
		for i := 1; len(keys) < min; i++ {
			name := "property" + strconv.Itoa(i)
			if _, ok := props.get(name); !ok && !contains(keys, name) {
				keys = append(keys, name)
			}
		}
	}
	if max := intKeyword(sch, "maxProperties", -1); max >= 0 && len(keys) > max {
		budget := max - countRequired(keys, required)
		var kept []string
		for _, k := range keys {
			if required[k] {
				kept = append(kept, k)
			} else if budget > 0 {
				kept = append(kept, k)
				budget--
			}
		}
		keys = kept
	}

	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(buf, k)
		buf.WriteByte(':')
		sub, ok := props.get(k)
		if !ok {
			sub, ok = patternSchema(sch, k)
		}
		if !ok && hasAdditional {
			sub = additional
		}
		child := st
		child.path = st.path + "/" + escapePointer(k)
		if err := g.value(buf, sub, child); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}

func countRequired(keys []string, required map[string]bool) int {
	n := 0
	for _, k := range keys {
		if required[k] {
			n++
		}
	}
	return n
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// patternSchema returns the schema of the first patternProperties entry
// whose pattern matches name.
func patternSchema(sch *object, name string) (any, bool) {
	pp, ok := sch.vals["patternProperties"].(*object)
	if !ok {
		return nil, false
	}
	for _, p := range pp.keys {
		if re, err := regexp.Compile(p); err == nil && re.MatchString(name) {
			return pp.vals[p], true
		}
	}
	return nil, false
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// array builds max(minItems, 1) items (all prefixItems when there are some),
// capped by maxItems; deep in a recursive schema, only minItems. Each item
// gets its own variant so uniqueItems holds for strings, numbers and enums.
func (g *generator) array(buf *bytes.Buffer, sch *object, st state) error {
	var prefix []any
	var items any = true
	if p, ok := sch.vals["prefixItems"].([]any); ok {
		prefix = p
	}
	switch it := sch.vals["items"].(type) {
	case []any: // drafts before 2020-12 spell tuples as an items array
		prefix = it
		if add, ok := sch.vals["additionalItems"]; ok {
			items = add
		}
	case nil:
	default:
		items = it
	}
	n := intKeyword(sch, "minItems", 0)
	if !st.minimal() {
		n = max(n, 1, len(prefix))
	}
	if items == false && n > len(prefix) {
		n = max(len(prefix), intKeyword(sch, "minItems", 0))
	}
	if maxItems := intKeyword(sch, "maxItems", -1); maxItems >= 0 && n > maxItems {
		n = maxItems
	}
	buf.WriteByte('[')
	for i := range n {
		if i > 0 {
			buf.WriteByte(',')
		}
		sub := items
		if i < len(prefix) {
			sub = prefix[i]
		}
		child := st
		child.path = fmt.Sprintf("%s/%d", st.path, i)
		child.variant = st.variant + i
		if err := g.value(buf, sub, child); err != nil {
			return err
		}
	}
	buf.WriteByte(']')
	return nil
}
