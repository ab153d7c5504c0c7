package schema

import (
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
