package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

const (
	// maxDepth stops schemas whose instances would nest without end.
	maxDepth = 64
	// maxRefHops is how many $ref hops one branch may take before the
	// generator switches to minimal instances (required properties only,
	// minItems items), which is how recursive schemas (trees, linked lists)
	// bottom out.
	maxRefHops = 3
	// MaxGenerated bounds the documents Generate builds, in bytes: a 267-byte
	// schema asking for 100 items of 200,000 characters once made the
	// offline provider build 20 MB. Check refuses such schemas up front;
	// this bounds what gets past its estimate.
	MaxGenerated = 1 << 20
)

// errTooLarge is the error of a document that would exceed MaxGenerated.
var errTooLarge = fmt.Errorf("schema: the instance would exceed %d bytes", MaxGenerated)

// Generate returns a JSON instance of the schema in raw, built
// deterministically from seed: the same schema and seed always give the same
// bytes. Strings come from the seed's words; numbers, arrays and objects are
// the smallest sensible values within the schema's bounds.
//
// It exists so the offline provider can answer structured-output requests
// without a model, and so tests can exercise the validating path with real
// documents. The result is validated before it is returned: when the schema
// uses something the generator cannot satisfy (a "pattern" none of its
// candidates match, "not", "contains" …) Generate fails rather than return a
// document that does not conform.
func Generate(raw json.RawMessage, seed string) ([]byte, error) {
	compiled, err := Compile(raw)
	if err != nil {
		return nil, err
	}
	root, err := parseOrdered(raw)
	if err != nil {
		return nil, fmt.Errorf("schema: not valid JSON: %w", err)
	}
	g := &generator{root: root, words: strings.Fields(seed)}
	if len(g.words) == 0 {
		g.words = []string{"example"}
	}
	g.text = strings.Join(g.words, " ")
	var buf bytes.Buffer
	if err := g.value(&buf, root, state{}); err != nil {
		return nil, err
	}
	if buf.Len() > MaxGenerated {
		return nil, errTooLarge
	}
	if err := compiled.Validate(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("schema: cannot generate a conforming instance: %w", err)
	}
	return buf.Bytes(), nil
}

type generator struct {
	root  any
	words []string
	text  string // the seed's words joined by single spaces
}

// state travels down the instance being built.
type state struct {
	path    string // JSON pointer of the value, for error messages
	variant int    // which alternative to pick, so sibling array items differ
	depth   int
	refs    int // $ref hops taken on this branch
}

// minimal reports whether only what the schema requires should be built.
func (st state) minimal() bool { return st.refs > maxRefHops }

func (st state) where() string {
	if st.path == "" {
		return "at the top level"
	}
	return "at " + st.path
}

func (g *generator) value(buf *bytes.Buffer, s any, st state) error {
	if st.depth > maxDepth {
		return fmt.Errorf("schema: %s: nesting deeper than %d (unbounded recursion?)", st.where(), maxDepth)
	}
	if buf.Len() > MaxGenerated {
		return errTooLarge
	}
	st.depth++
	sch, err := asSchema(s, st)
	if err != nil {
		return err
	}
	sch, st, err = g.resolve(sch, st)
	if err != nil {
		return err
	}
	if v, ok := sch.get("const"); ok {
		return encodeOrdered(buf, v)
	}
	if enum, ok := sch.vals["enum"].([]any); ok && len(enum) > 0 {
		return encodeOrdered(buf, enum[st.variant%len(enum)])
	}
	switch t := typeOf(sch, st.minimal()); t {
	case "object":
		return g.object(buf, sch, st)
	case "array":
		return g.array(buf, sch, st)
	case "integer", "number":
		n, err := g.number(sch, t == "integer", st)
		if err != nil {
			return err
		}
		buf.WriteString(n)
	case "boolean":
		buf.WriteString(fmt.Sprint(st.variant%2 == 0))
	case "null":
		buf.WriteString("null")
	default:
		writeString(buf, g.str(sch, st))
	}
	return nil
}

// asSchema turns a boolean schema into its object form.
func asSchema(s any, st state) (*object, error) {
	switch x := s.(type) {
	case *object:
		return x, nil
	case bool:
		if x {
			return &object{vals: map[string]any{}}, nil
		}
		return nil, fmt.Errorf("schema: %s: the schema false admits no value", st.where())
	case nil:
		return &object{vals: map[string]any{}}, nil
	}
	return nil, fmt.Errorf("schema: %s: a schema must be an object or a boolean, not %T", st.where(), s)
}

// typeOf picks the type to build: the first non-null entry of "type" (null
// itself when minimal, to end a recursion), else one implied by the keywords
// present, else string (any value is allowed, and a string shows the seed).
func typeOf(sch *object, minimal bool) string {
	switch t := sch.vals["type"].(type) {
	case string:
		return t
	case []any:
		if minimal && slices.Contains(t, any("null")) {
			return "null"
		}
		for _, e := range t {
			if s, ok := e.(string); ok && s != "null" {
				return s
			}
		}
		if len(t) > 0 {
			return "null"
		}
	}
	for _, kw := range sch.keys {
		switch kw {
		case "properties", "required", "additionalProperties", "patternProperties",
			"minProperties", "maxProperties", "propertyNames", "dependentRequired":
			return "object"
		case "items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains":
			return "array"
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
			return "number"
		}
	}
	return "string"
}
