package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/runedge/runedge/internal/jsondepth"
)

// Limits on the schemas clients send. A schema is a program the server
// runs: compiled, walked by the generator, applied to every answer. Without
// bounds a tiny one costs without limit: `minItems: 100` of `minLength:
// 200000` made the offline provider build 20 MB from a 267-byte request, and
// one nested 10,000 levels deep failed with a 500.
const (
	// MaxSchemaBytes bounds a schema's encoded size; OpenAI's own limits
	// (about 15,000 characters of names and enum values) are far below.
	MaxSchemaBytes = 256 << 10
	// MaxSchemaDepth bounds how deeply a schema's JSON nests: a property of
	// an object schema takes two levels ("properties", the name), so this is
	// about 32 levels of objects, against OpenAI's documented 5 to 10.
	MaxSchemaDepth = 64
	// MaxInstanceBytes bounds the smallest document that satisfies the
	// schema, estimated from minItems, minLength, minProperties and the
	// required properties, multiplied down the tree.
	MaxInstanceBytes = MaxGenerated
	// maxVisits bounds the subschemas the estimate visits, $ref targets
	// counted each time they are reached, so that references fanning out
	// cannot make it exponential.
	maxVisits = 100_000
	// maxBoundRefHops is how many $ref hops one branch of the estimate
	// follows; past them it assumes the smallest value, as the generator's
	// recursion does.
	maxBoundRefHops = 8
)

// ErrBounds is matched (errors.Is) by Check's refusals: a schema beyond the
// limits above, or one no value can satisfy.
var ErrBounds = errors.New("schema out of bounds")

// boundsError is a refusal by Check.
type boundsError struct{ msg string }

func (e *boundsError) Error() string        { return "schema: " + e.msg }
func (e *boundsError) Is(target error) bool { return target == ErrBounds }

func refuse(format string, args ...any) error {
	return &boundsError{fmt.Sprintf(format, args...)}
}

// Check compiles raw, as Compile does, and refuses (ErrBounds) a schema
// beyond the limits above or one that no value can satisfy, which is
// recognised where it is plain: false where a value is required (the schema
// itself, a required property, the items minItems asks for), an empty enum,
// "not": {}, and contradictory bounds (minLength > maxLength, minimum >
// maximum, more required properties than maxProperties …). It is meant for
// the moment a request is admitted, before any work is done for it.
//
// Check is CheckContext for callers without a request.
func Check(raw json.RawMessage) (*Schema, error) {
	return CheckContext(context.Background(), raw)
}

// CheckContext is Check within ctx and CheckBudget (budget.go): when ctx
// ends it returns the context's cause; when the budget is spent, a refusal
// (ErrBounds). A panic in the library is a refusal too.
func CheckContext(ctx context.Context, raw json.RawMessage) (s *Schema, err error) {
	defer func() {
		if p := recover(); p != nil {
			s, err = nil, refuse("the schema cannot be checked: the JSON Schema library failed on it (%v)", p)
		}
	}()
	if len(raw) > MaxSchemaBytes {
		return nil, refuse("the schema is %d bytes; the limit is %d", len(raw), MaxSchemaBytes)
	}
	if err := CheckDepth(raw); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, CheckBudget, errBudget)
	defer cancel()
	compiled, err := CompileContext(ctx, raw)
	if err != nil {
		return nil, err
	}
	if err := budgetSpent(ctx); err != nil {
		return nil, err
	}
	if compiled.bounds != nil {
		return nil, compiled.bounds
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("schema: not valid JSON: %w", err)
	}
	e := &estimator{root: root}
	size, err := e.need(root, "", 0)
	if err != nil {
		return nil, err
	}
	if size > MaxInstanceBytes {
		return nil, refuse("the smallest document the schema allows is over %d bytes (minItems, minLength and minProperties multiply down the tree); the limit is %d", MaxInstanceBytes, MaxInstanceBytes)
	}
	return compiled, nil
}

// CheckDepth refuses (ErrBounds) a schema whose JSON nests deeper than
// MaxSchemaDepth, without decoding it. It is Check's first step, exported
// for the stages that decode a schema before Check sees it.
func CheckDepth(raw []byte) error {
	if d := jsonDepth(raw, MaxSchemaDepth); d > MaxSchemaDepth {
		return refuse("the schema nests deeper than %d levels", MaxSchemaDepth)
	}
	return nil
}

// jsonDepth returns how deeply raw's arrays and objects nest, counting no
// further than limit+1, without decoding it (a decoder would recurse).
func jsonDepth(raw []byte, limit int) int { return jsondepth.Depth(raw, limit) }

// estimator computes a lower bound of the size of the documents a schema
// allows, or that it allows none.
type estimator struct {
	root   any
	visits int
}

// sizeCap is a size past every limit; sizes saturate there so that products
// cannot overflow.
const sizeCap = math.MaxInt64 / 4

func addSize(a, b int64) int64 { return min(a+b, sizeCap) }

func mulSize(a, n int64) int64 {
	if a == 0 || n == 0 {
		return 0
	}
	if a > sizeCap/n {
		return sizeCap
	}
	return a * n
}

// need returns the least number of bytes of a value of schema s, at path,
// having followed hops $refs, or the reason no value satisfies s.
func (e *estimator) need(s any, path string, hops int) (int64, error) {
	if e.visits++; e.visits > maxVisits {
		return 0, refuse("the schema has more than %d subschemas (counting those $ref reaches each time)", maxVisits)
	}
	where := path
	if where == "" {
		where = "the top level"
	}
	sch, ok := s.(map[string]any)
	if !ok {
		if s == false {
			return 0, refuse("at %s: the schema false admits no value", where)
		}
		return 1, nil // true, or not a schema (Compile has refused those)
	}
	if n, ok := sch["not"]; ok && (n == true || isEmptyObject(n)) {
		return 0, refuse("at %s: \"not\" of a schema that admits everything admits no value", where)
	}
	if enum, ok := sch["enum"].([]any); ok && len(enum) == 0 {
		return 0, refuse("at %s: an empty enum admits no value", where)
	}
	if err := contradictions(sch, where); err != nil {
		return 0, err
	}
	size := int64(1)
	if ref, ok := sch["$ref"].(string); ok && hops < maxBoundRefHops {
		if target, ok := e.lookup(ref); ok {
			n, err := e.need(target, path, hops+1)
			if err != nil {
				return 0, err
			}
			size = max(size, n)
		}
	}
	if branches, ok := sch["allOf"].([]any); ok {
		for i, b := range branches {
			n, err := e.need(b, fmt.Sprintf("%s/allOf/%d", path, i), hops)
			if err != nil {
				return 0, err
			}
			size = max(size, n)
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		branches, ok := sch[kw].([]any)
		if !ok || len(branches) == 0 {
			continue
		}
		least, firstErr := int64(sizeCap), error(nil)
		for i, b := range branches {
			n, err := e.need(b, fmt.Sprintf("%s/%s/%d", path, kw, i), hops)
			if err != nil {
				firstErr = cmpErr(firstErr, err)
				continue
			}
			least = min(least, n)
		}
		if least == sizeCap && firstErr != nil {
			return 0, firstErr
		}
		size = max(size, least)
	}
	if c, ok := sch["const"]; ok {
		b, _ := json.Marshal(c)
		return max(size, int64(len(b))), nil
	}
	if enum, ok := sch["enum"].([]any); ok {
		least := int64(sizeCap)
		for _, v := range enum {
			b, _ := json.Marshal(v)
			least = min(least, int64(len(b)))
		}
		return max(size, least), nil
	}
	n, err := e.byType(sch, path, where, hops)
	if err != nil {
		return 0, err
	}
	return max(size, n), nil
}

// cmpErr keeps the first error.
func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

func isEmptyObject(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// byType is the least size over the types the schema allows.
func (e *estimator) byType(sch map[string]any, path, where string, hops int) (int64, error) {
	var types []string
	switch t := sch["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				types = append(types, s)
			}
		}
	}
	if len(types) == 0 {
		return 1, nil // untyped: a number satisfies every string, array and object keyword
	}
	least, firstErr := int64(sizeCap), error(nil)
	for _, t := range types {
		var n int64
		var err error
		switch t {
		case "string":
			n = addSize(2, num(sch, "minLength"))
		case "array":
			n, err = e.array(sch, path, where, hops)
		case "object":
			n, err = e.object(sch, path, where, hops)
		case "boolean", "null":
			n = 4
		default:
			n = 1
		}
		if err != nil {
			firstErr = cmpErr(firstErr, err)
			continue
		}
		least = min(least, n)
	}
	if least == sizeCap && firstErr != nil {
		return 0, firstErr
	}
	return least, nil
}

// array is the least size of an array: its minItems items, the prefix ones
// first.
func (e *estimator) array(sch map[string]any, path, where string, hops int) (int64, error) {
	minItems := num(sch, "minItems")
	prefix, _ := sch["prefixItems"].([]any)
	size := int64(2)
	for i, p := range prefix {
		if int64(i) >= minItems {
			break
		}
		n, err := e.need(p, fmt.Sprintf("%s/prefixItems/%d", path, i), hops)
		if err != nil {
			return 0, err
		}
		size = addSize(size, n+1)
	}
	if rest := minItems - int64(len(prefix)); rest > 0 {
		items, ok := sch["items"]
		if !ok {
			items = true
		}
		if items == false {
			return 0, refuse("at %s: minItems is %d but only %d items are allowed", where, minItems, len(prefix))
		}
		n, err := e.need(items, path+"/items", hops)
		if err != nil {
			return 0, err
		}
		size = addSize(size, mulSize(n+1, rest))
	}
	return size, nil
}

// object is the least size of an object: its required properties, then
// filler ones up to minProperties.
func (e *estimator) object(sch map[string]any, path, where string, hops int) (int64, error) {
	props, _ := sch["properties"].(map[string]any)
	_, patterned := sch["patternProperties"]
	additional, hasAdditional := sch["additionalProperties"]
	if !hasAdditional {
		additional = true
	}
	required, _ := sch["required"].([]any)
	size := int64(2)
	seen := make(map[string]bool, len(required))
	for _, r := range required {
		name, ok := r.(string)
		if !ok || seen[name] {
			continue
		}
		seen[name] = true
		sub, declared := props[name]
		if !declared {
			if additional == false && !patterned {
				return 0, refuse("at %s: property %q is required but additionalProperties is false", where, name)
			}
			sub = additional
			if patterned {
				sub = true
			}
		}
		n, err := e.need(sub, path+"/properties/"+escapePointer(name), hops)
		if err != nil {
			return 0, fmt.Errorf("%w (required)", err)
		}
		size = addSize(size, addSize(n, int64(len(name)+4)))
	}
	if extra := num(sch, "minProperties") - int64(len(seen)); extra > 0 {
		filler := int64(1)
		if m, ok := additional.(map[string]any); ok && !patterned {
			n, err := e.need(m, path+"/additionalProperties", hops)
			if err != nil {
				return 0, err
			}
			filler = n
		}
		size = addSize(size, mulSize(filler+8, extra))
	}
	return size, nil
}

// contradictions refuses bounds no value can meet.
func contradictions(sch map[string]any, where string) error {
	for _, p := range [][2]string{{"minLength", "maxLength"}, {"minItems", "maxItems"}, {"minProperties", "maxProperties"}} {
		lo, hi := num(sch, p[0]), numOr(sch, p[1], -1)
		if hi >= 0 && lo > hi {
			return refuse("at %s: %s %d is greater than %s %d", where, p[0], lo, p[1], hi)
		}
	}
	if req, ok := sch["required"].([]any); ok {
		if hi := numOr(sch, "maxProperties", -1); hi >= 0 && int64(len(req)) > hi {
			return refuse("at %s: %d properties are required but maxProperties is %d", where, len(req), hi)
		}
	}
	if greater(sch["minimum"], sch["maximum"]) {
		return refuse("at %s: minimum is greater than maximum", where)
	}
	return nil
}

// num reads a non-negative integer keyword, 0 when absent.
func num(sch map[string]any, kw string) int64 { return numOr(sch, kw, 0) }

func numOr(sch map[string]any, kw string, def int64) int64 {
	n, ok := sch[kw].(json.Number)
	if !ok {
		return def
	}
	if i, err := n.Int64(); err == nil {
		return max(i, 0)
	}
	// Not an int64: a fraction, or too large (Float64 says +Inf).
	if f, _ := n.Float64(); f > 0 {
		return int64(min(f, sizeCap))
	}
	return def
}

// lookup resolves a local reference ("#", "#/$defs/x") in the root.
func (e *estimator) lookup(ref string) (any, bool) { return lookupPointer(e.root, ref) }
