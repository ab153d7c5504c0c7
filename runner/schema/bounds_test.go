package schema

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestCheckRefuses(t *testing.T) {
	deep := strings.Repeat(`{"type":"array","items":`, 10_000) + `{}` + strings.Repeat(`}`, 10_000)
	for _, tc := range []struct{ name, schema, want string }{
		{"20 MB document", `{"type":"object","required":["a"],"properties":{"a":{"type":"array","minItems":100,"items":{"type":"string","minLength":200000}}}}`, "smallest document"},
		{"product of minProperties", `{"type":"object","minProperties":4000,"additionalProperties":{"type":"array","minItems":1000}}`, "smallest document"},
		{"huge minLength", `{"type":"string","minLength":1e30}`, "smallest document"},
		{"nested 10,000 levels", deep, "nests deeper than 64"},
		{"too large", `{"type":"object","description":"` + strings.Repeat("x", MaxSchemaBytes) + `"}`, "the limit is"},
		{"false required property", `{"type":"object","required":["a"],"properties":{"a":false}}`, "the schema false admits no value"},
		{"false schema", `false`, "admits no value"},
		{"empty enum", `{"enum":[]}`, "empty enum"},
		{"not everything", `{"not":{}}`, `"not"`},
		{"minLength over maxLength", `{"type":"string","minLength":5,"maxLength":2}`, "minLength 5 is greater than maxLength 2"},
		{"minimum over maximum", `{"type":"integer","minimum":5,"maximum":2}`, "minimum is greater"},
		{"required over maxProperties", `{"type":"object","required":["a","b"],"maxProperties":1}`, "2 properties are required"},
		{"required but not allowed", `{"type":"object","required":["a"],"additionalProperties":false}`, `"a" is required`},
		{"items false", `{"type":"array","minItems":1,"items":false}`, "minItems is 1"},
		{"false through $ref", `{"type":"object","required":["a"],"properties":{"a":{"$ref":"#/$defs/no"}},"$defs":{"no":false}}`, "admits no value"},
		{"every branch impossible", `{"anyOf":[false,{"enum":[]}]}`, "admits no value"},
		{"ref fan-out", fanOut(8), "more than 100000 subschemas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check([]byte(tc.schema))
			if !errors.Is(err, ErrBounds) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want ErrBounds containing %q", err, tc.want)
			}
		})
	}
}

// fanOut is a schema whose $defs each require ten properties of the next:
// 10^n subschemas reached from a few kilobytes.
func fanOut(n int) string {
	var b strings.Builder
	b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		next := `{"type":"integer"}`
		if i+1 < n {
			next = `{"$ref":"#/$defs/d` + strconv.Itoa(i+1) + `"}`
		}
		var props, req []string
		for p := range 10 {
			props = append(props, `"p`+strconv.Itoa(p)+`":`+next)
			req = append(req, `"p`+strconv.Itoa(p)+`"`)
		}
		b.WriteString(`"d` + strconv.Itoa(i) + `":{"type":"object","required":[` + strings.Join(req, ",") +
			`],"properties":{` + strings.Join(props, ",") + `}}`)
	}
	b.WriteString("}}")
	return b.String()
}

func TestCheckAccepts(t *testing.T) {
	for _, s := range []string{
		`{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`,
		`{"type":"array","minItems":100,"items":{"type":"string","minLength":2000}}`,
		`{"type":"object","properties":{"next":{"$ref":"#"}},"required":[]}`,
		`{"$defs":{"node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"$ref":"#/$defs/node"}`,
		`{"anyOf":[false,{"type":"string"}]}`,
		`{"type":["string","null"],"minLength":3}`,
		`true`,
	} {
		if _, err := Check([]byte(s)); err != nil {
			t.Errorf("Check(%s) = %v, want it accepted", s, err)
		}
	}
	// A schema that does not compile is not a bounds error.
	if _, err := Check([]byte(`{"type":"nonsense"}`)); err == nil || errors.Is(err, ErrBounds) {
		t.Errorf("Check of a schema that does not compile = %v, want a compile error", err)
	}
}

// TestGenerateBounded: Generate stops at MaxGenerated whatever the schema.
func TestGenerateBounded(t *testing.T) {
	for _, s := range []string{
		`{"type":"array","minItems":100,"items":{"type":"string","minLength":200000}}`,
		`{"type":"string","minLength":100000000}`,
		`{"type":"object","minProperties":100000000}`,
	} {
		doc, err := Generate([]byte(s), "x")
		if err == nil || len(doc) > MaxGenerated {
			t.Errorf("Generate(%s) = %d bytes, %v; want an error", s, len(doc), err)
		}
	}
}
