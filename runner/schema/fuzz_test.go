package schema

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"
)

// FuzzCheckBoundsValidation: a schema Check accepts validates any document
// within the budget — it ends, and fast, whatever the document.
func FuzzCheckBoundsValidation(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"type":"object","properties":{"a":{"$ref":"#"}},"required":["a"]}`, `{"a":{"a":{}}}`},
		{chain(8, `{"if":%s,"then":%s,"else":%s}`), `"x"`},
		{chain(6, `{"allOf":[%s,%s]}`), `["x",["y"]]`},
		{`{"items":{"anyOf":[{"$ref":"#"},{"type":"string"}]},"contains":{"$ref":"#"}}`, `[[["a"]],"b"]`},
		{`{"patternProperties":{"^a":{"$ref":"#"}},"additionalProperties":{"$ref":"#"},"propertyNames":{"minLength":1}}`, `{"a":{"b":{}}}`},
		{`{"dependentSchemas":{"a":{"$ref":"#"}},"unevaluatedProperties":{"not":{"$ref":"#"}}}`, `{"a":1,"b":{"a":2}}`},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	f.Fuzz(func(t *testing.T, raw, doc []byte) {
		s, err := Check(raw)
		if err != nil {
			return
		}
		start := time.Now()
		_ = s.Validate(doc)
		if el := time.Since(start); el > 2*time.Second {
			t.Fatalf("validation of %d bytes took %s against an accepted schema %q", len(doc), el, raw)
		}
	})
}

// FuzzNumbersOnTheBytes: a JSON document whose numbers the byte check
// lets through has only numbers that big.Rat parses (so the library gets
// no nil) and that are within float64's range; and the check never reads
// past the document or panics, JSON or not.
func FuzzNumbersOnTheBytes(f *testing.F) {
	for _, seed := range []string{`1e1000000`, `[1e308, -5e-324, 0.0e-999]`, `{"a":"1e999","b":[1.5E+2]}`,
		`"\"1e999"`, `123456789012345678901234567890123456789`, `1e-400`, `-`, `1e`, `0.` + strings.Repeat("0", 50) + `1`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if badNumber(doc) != "" || !json.Valid(doc) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case json.Number:
				if len(x) > MaxNumberLength {
					t.Fatalf("%s: %d characters passed", x, len(x))
				}
				r, ok := new(big.Rat).SetString(x.String())
				if !ok {
					t.Fatalf("%s: big.Rat cannot parse it, and it passed", x)
				}
				if f, _ := r.Float64(); math.IsInf(f, 0) || (f == 0 && r.Sign() != 0) {
					t.Fatalf("%s: outside float64's range, and it passed", x)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			case map[string]any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		var v any
		if dec.Decode(&v) == nil {
			walk(v)
		}
	})
}
