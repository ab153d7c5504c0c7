package schema

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
)

// The validator evaluates every subschema a keyword holds, and follows
// each $ref again every time it is reached, with no memo: allOf [$ref A,
// $ref A] evaluates A twice, so levels of such references multiply. A
// schema of 2 KB built that way in if/then/else or not took seconds per
// value. The bound below counts those evaluations before a schema is
// accepted, and is the validation budget afterwards.
const (
	// MaxInstanceDepth bounds how deeply a value checked against a client's
	// schema may nest. It fixes how far a recursive schema is expanded;
	// a deeper value is refused before it is validated.
	MaxInstanceDepth = 64
	// MaxEvaluationsPerValue bounds the subschema evaluations that one
	// value (one node of the instance) can cause, counting every keyword
	// that holds subschemas and each $ref as often as it is reached.
	MaxEvaluationsPerValue = 10_000
	// MaxValidationCost is validation's budget: the evaluations a whole
	// document may cost (the values at each depth times the evaluations
	// per value there). A document over it is refused unvalidated.
	MaxValidationCost = 1_000_000
	// maxExpandWork bounds the work of the expansion itself: distinct
	// (subschema, depth) pairs computed.
	maxExpandWork = 200_000
)

// inPlace are the keywords whose subschemas apply to the value itself.
var inPlace = []string{"allOf", "anyOf", "oneOf", "not", "if", "then", "else",
	"dependentSchemas", "dependencies", "$ref", "$dynamicRef", "$recursiveRef"}

// descending are the keywords whose subschemas apply to a value's members.
var descending = []string{"properties", "patternProperties", "additionalProperties",
	"unevaluatedProperties", "propertyNames", "items", "prefixItems",
	"additionalItems", "contains", "unevaluatedItems"}

// expander computes, for a schema applied to a value, how many subschema
// evaluations fall on a member j levels below it (worst case over the
// members), memoised per (subschema, j).
type expander struct {
	root    any
	anchors map[string]any
	memo    map[expandKey]int64
	onStack map[expandKey]bool
	work    int
}

// expandKey names a subschema by its map's identity: the decoded schema
// outlives the expansion, so the address is stable and unique.
type expandKey struct {
	node uintptr
	j    int
}

// evaluationsPerLevel returns, for each instance depth k from 0, the most
// subschema evaluations one value at depth k can cost when root is applied
// to the document, up to the first depth no subschema reaches (at most
// MaxInstanceDepth+1 entries). It refuses (ErrBounds) a schema over
// MaxEvaluationsPerValue at some depth, or one it cannot follow.
func evaluationsPerLevel(root any) ([]int64, error) {
	x := &expander{root: root, memo: map[expandKey]int64{}, onStack: map[expandKey]bool{}}
	var levels []int64
	for k := 0; k <= MaxInstanceDepth; k++ {
		n, err := x.at(root, k)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		if n > MaxEvaluationsPerValue {
			return nil, refuse("validating a value %d levels deep would evaluate more than %d subschemas (every keyword that holds subschemas counts, and each $ref each time it is reached)", k, MaxEvaluationsPerValue)
		}
		levels = append(levels, n)
	}
	return levels, nil
}

// at is the evaluations s causes on a value j levels below the one it is
// applied to.
func (x *expander) at(s any, j int) (int64, error) {
	m, ok := s.(map[string]any)
	if !ok || !hasSubschemas(m) {
		if j == 0 {
			return 1 + literalCost(m), nil // a nil map has no literals
		}
		return 0, nil
	}
	key := expandKey{reflect.ValueOf(m).Pointer(), j}
	if n, ok := x.memo[key]; ok {
		return n, nil
	}
	if x.onStack[key] {
		// A reference cycle that never descends: the validator refuses
		// it on the first value (a ref cycle error), so it costs nothing
		// more here.
		return 0, nil
	}
	if x.work++; x.work > maxExpandWork {
		return 0, refuse("the schema is too large to bound (more than %d subschemas at distinct depths)", maxExpandWork)
	}
	x.onStack[key] = true
	defer delete(x.onStack, key)
	n := int64(0)
	if j == 0 {
		n = 1 + literalCost(m)
	}
	for _, kw := range inPlace {
		sub, ok := m[kw]
		if !ok {
			continue
		}
		add, err := x.inPlace(kw, sub, j)
		if err != nil {
			return 0, err
		}
		n = addSize(n, add)
	}
	if j > 0 {
		d, err := x.descend(m, j-1)
		if err != nil {
			return 0, err
		}
		n = addSize(n, d)
	}
	x.memo[key] = n
	return n, nil
}

// inPlace is the evaluations of one in-place keyword's subschemas.
func (x *expander) inPlace(kw string, sub any, j int) (int64, error) {
	switch kw {
	case "$ref", "$dynamicRef", "$recursiveRef":
		ref, _ := sub.(string)
		target, err := x.resolve(ref)
		if err != nil {
			return 0, err
		}
		return x.at(target, j)
	case "dependentSchemas", "dependencies":
		return x.sum(members(sub), j)
	}
	if list, ok := sub.([]any); ok {
		return x.sum(list, j)
	}
	return x.at(sub, j)
}

// descend is the evaluations on a member j levels below a member of the
// value: the worst of an object's member (one declared property or the
// additional ones, plus every pattern, unevaluatedProperties and
// propertyNames) and an array's item.
func (x *expander) descend(m map[string]any, j int) (int64, error) {
	props, err := x.most(members(m["properties"]), j)
	if err != nil {
		return 0, err
	}
	obj, err := x.sum([]any{m["additionalProperties"]}, j)
	if err != nil {
		return 0, err
	}
	obj = max(obj, props)
	rest, err := x.sum(append(members(m["patternProperties"]), m["unevaluatedProperties"], m["propertyNames"]), j)
	if err != nil {
		return 0, err
	}
	obj = addSize(obj, rest)
	prefix, _ := m["prefixItems"].([]any)
	if tuple, ok := m["items"].([]any); ok { // drafts before 2020-12
		prefix = tuple
	}
	arr, err := x.most(prefix, j)
	if err != nil {
		return 0, err
	}
	var items any
	if _, tuple := m["items"].([]any); !tuple {
		items = m["items"]
	}
	more, err := x.sum([]any{items, m["additionalItems"], m["contains"], m["unevaluatedItems"]}, j)
	if err != nil {
		return 0, err
	}
	return max(obj, addSize(arr, more)), nil
}

// sum adds the evaluations of subschemas that all apply (nil: absent).
func (x *expander) sum(list []any, j int) (int64, error) {
	total := int64(0)
	for _, s := range list {
		if s == nil {
			continue
		}
		n, err := x.at(s, j)
		if err != nil {
			return 0, err
		}
		total = addSize(total, n)
	}
	return total, nil
}

// most is the worst of subschemas of which one applies.
func (x *expander) most(list []any, j int) (int64, error) {
	worst := int64(0)
	for _, s := range list {
		n, err := x.at(s, j)
		if err != nil {
			return 0, err
		}
		worst = max(worst, n)
	}
	return worst, nil
}

// members is the values of a keyword that maps names to subschemas.
func members(v any) []any {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make([]any, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	return out
}

// hasSubschemas reports whether m holds any subschema: the leaves of a
// schema ({"type":"string"}) cost one evaluation and are not memoised.
func hasSubschemas(m map[string]any) bool {
	for _, kw := range inPlace {
		if _, ok := m[kw]; ok {
			return true
		}
	}
	for _, kw := range descending {
		if _, ok := m[kw]; ok {
			return true
		}
	}
	return false
}

// resolve finds a reference's target: a JSON pointer into the schema
// ("#", "#/$defs/x") or a plain-name anchor ("#name", $anchor or
// $dynamicAnchor). Any other reference cannot be bounded and is refused.
func (x *expander) resolve(ref string) (any, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, refuse("the bounds check follows only references inside the schema (#/... or #anchor), not %q", ref)
	}
	if frag == "" || strings.HasPrefix(frag, "/") || strings.HasPrefix(frag, "%2F") {
		if target, ok := lookupPointer(x.root, ref); ok {
			return target, nil
		}
		return nil, refuse("reference %q not found", ref)
	}
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	if x.anchors == nil {
		x.anchors = map[string]any{}
		collectAnchors(x.root, x.anchors, 0)
	}
	if target, ok := x.anchors[frag]; ok {
		return target, nil
	}
	return nil, refuse("reference %q not found", ref)
}

// collectAnchors indexes the $anchor and $dynamicAnchor names of the
// schema's objects. The schema's depth is already bounded (CheckDepth).
func collectAnchors(v any, into map[string]any, depth int) {
	if depth > MaxSchemaDepth {
		return
	}
	switch t := v.(type) {
	case map[string]any:
		for _, kw := range []string{"$anchor", "$dynamicAnchor"} {
			if name, ok := t[kw].(string); ok {
				if _, seen := into[name]; !seen {
					into[name] = t
				}
			}
		}
		for _, c := range t {
			collectAnchors(c, into, depth+1)
		}
	case []any:
		for _, c := range t {
			collectAnchors(c, into, depth+1)
		}
	}
}

// cost is the most subschema evaluations validating v can take: the
// values at each depth (a long string counting as several) times the
// evaluations one value there may cost.
// v nests at most MaxInstanceDepth levels (Validate checked the bytes).
func (s *Schema) cost(v any) int64 {
	var perDepth [MaxInstanceDepth + 1]int64
	countValues(v, 0, &perDepth)
	total := int64(0)
	for k, n := range s.levels {
		total = addSize(total, mulSize(perDepth[k], n))
	}
	return total
}

// bytesPerValue is how many bytes of a value count as one more value: an
// evaluation that reads a whole value (a pattern or format on a string,
// uniqueItems on an array, const or enum on anything) costs in proportion
// to its size, so a large value costs as many values as its size says. A
// value's size counts at its own depth and at each of its ancestors'.
const bytesPerValue = 256

// countValues adds v and its members to into (nil: nowhere), by depth
// counting from depth, and returns v's size in bytes (about its
// encoding's). Values deeper than MaxInstanceDepth are not counted (the
// document's depth is checked first; a schema literal's is bounded by the
// schema's).
func countValues(v any, depth int, into *[MaxInstanceDepth + 1]int64) int64 {
	size := int64(2)
	switch t := v.(type) {
	case string:
		size += int64(len(t))
	case json.Number:
		size = int64(len(t))
	case map[string]any:
		for k, c := range t {
			size += int64(len(k)) + 4 + countValues(c, depth+1, into)
		}
	case []any:
		for _, c := range t {
			size += 1 + countValues(c, depth+1, into)
		}
	}
	if into != nil && depth <= MaxInstanceDepth {
		into[depth] += 1 + size/bytesPerValue
	}
	return size
}

// literalCost is the extra evaluations a const or enum costs: comparing a
// value with them reads them whole.
func literalCost(m map[string]any) int64 {
	n := int64(0)
	for _, kw := range []string{"const", "enum"} {
		if v, ok := m[kw]; ok {
			n += countValues(v, 0, nil) / bytesPerValue
		}
	}
	return n
}

// budgetError is a document over the validation budget.
func budgetError(cost int64) error {
	return fmt.Errorf("output is over the validation budget: checking it against the schema could take %d subschema evaluations; the budget is %d", cost, MaxValidationCost)
}
