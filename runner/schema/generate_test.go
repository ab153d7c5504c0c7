package schema_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/runedge/runedge/runner/schema"
)

// generateCases are schemas of the kinds clients send. Each must produce a
// document that passes Validate.
var generateCases = []struct {
	name, schema string
}{
	{"string", `{"type":"string"}`},
	{"empty schema", `{}`},
	{"true schema", `true`},
	{"integer bounds", `{"type":"integer","minimum":10,"maximum":12}`},
	{"integer exclusive", `{"type":"integer","exclusiveMinimum":3,"exclusiveMaximum":5}`},
	{"integer multipleOf", `{"type":"integer","minimum":7,"multipleOf":5}`},
	{"integer fractional multipleOf", `{"type":"integer","minimum":1,"multipleOf":1.5}`},
	{"number multipleOf decimal", `{"type":"number","minimum":0.25,"maximum":0.9,"multipleOf":0.1}`},
	{"number narrow exclusive", `{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":0.5}`},
	{"negative range", `{"type":"integer","maximum":-100}`},
	{"draft4 exclusive", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"number","minimum":5,"exclusiveMinimum":true,"maximum":6}`},
	{"string lengths", `{"type":"string","minLength":40,"maxLength":45}`},
	{"short string", `{"type":"string","maxLength":3}`},
	{"pattern", `{"type":"string","pattern":"^[a-z]+(-[a-z]+)*$"}`},
	{"pattern digits", `{"type":"string","pattern":"^[0-9]+$"}`},
	{"formats", `{"type":"object","properties":{
		"d":{"type":"string","format":"date"},
		"dt":{"type":"string","format":"date-time"},
		"t":{"type":"string","format":"time"},
		"e":{"type":"string","format":"email"},
		"u":{"type":"string","format":"uri"},
		"id":{"type":"string","format":"uuid"},
		"h":{"type":"string","format":"hostname"},
		"ip4":{"type":"string","format":"ipv4"},
		"ip6":{"type":"string","format":"ipv6"},
		"dur":{"type":"string","format":"duration"}},
		"required":["d","dt","t","e","u","id","h","ip4","ip6","dur"]}`},
	{"enum", `{"enum":["red","green",3,null]}`},
	{"const", `{"const":{"a":[1,2]}}`},
	{"boolean", `{"type":"boolean"}`},
	{"null", `{"type":"null"}`},
	{"nullable list", `{"type":["null","string"],"minLength":2}`},
	{"only null in list", `{"type":["null"]}`},
	{"array min", `{"type":"array","items":{"type":"integer"},"minItems":3}`},
	{"array max zero", `{"type":"array","items":{"type":"integer"},"maxItems":0}`},
	{"unique items", `{"type":"array","items":{"type":"string"},"minItems":4,"uniqueItems":true}`},
	{"unique enum items", `{"type":"array","items":{"enum":["a","b","c"]},"minItems":3,"uniqueItems":true}`},
	{"unique objects", `{"type":"array","minItems":3,"uniqueItems":true,"items":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}`},
	{"prefixItems", `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}`},
	{"draft7 tuple", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"boolean"},{"type":"number"}],"additionalItems":false}`},
	{"inferred types", `{"properties":{"a":{"minimum":2},"b":{"items":{"maxLength":2}}},"required":["a","b"]}`},
	{"required without properties", `{"type":"object","required":["x","y"]}`},
	{"additional schema", `{"type":"object","additionalProperties":{"type":"integer"},"minProperties":2}`},
	{"max properties", `{"type":"object","properties":{"a":{},"b":{},"c":{}},"required":["c"],"maxProperties":2}`},
	{"pattern properties", `{"type":"object","patternProperties":{"^n_":{"type":"integer"}},"required":["n_count"],"additionalProperties":false}`},
	{"anyOf nullable", `{"anyOf":[{"type":"null"},{"type":"integer","minimum":3}]}`},
	{"oneOf", `{"oneOf":[{"type":"string","maxLength":2},{"type":"integer"}]}`},
	{"allOf merge", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"integer","minimum":4}},"required":["b"]}],"unevaluatedProperties":false}`},
	{"ref with siblings", `{"$defs":{"base":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}},"$ref":"#/$defs/base","properties":{"b":{"type":"boolean"}},"required":["b"]}`},
	{"definitions", `{"definitions":{"n":{"type":"number","maximum":-1.5}},"type":"object","properties":{"x":{"$ref":"#/definitions/n"}},"required":["x"]}`},
	{"escaped pointer", `{"$defs":{"a/b":{"type":"integer"}},"$ref":"#/$defs/a~1b"}`},
	{"recursive tree", `{"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["name","children"],"additionalProperties":false}},"$ref":"#/$defs/node"}`},
	{"recursive root", `{"type":"object","properties":{"value":{"type":"integer"},"next":{"anyOf":[{"$ref":"#"},{"type":"null"}]}},"required":["value","next"],"additionalProperties":false}`},
	{"openai strict", openAIStrict},
}

// openAIStrict is shaped like what the OpenAI SDKs send for structured
// outputs (response_format / text.format json_schema, strict: true): every
// property required, additionalProperties false everywhere, nullable
// fields as type lists or anyOf with null, enums and $defs.
const openAIStrict = `{
  "type": "object",
  "properties": {
    "title": {"type": "string", "description": "A short title"},
    "priority": {"type": "string", "enum": ["low", "medium", "high"]},
    "due": {"type": ["string", "null"], "format": "date"},
    "estimate_hours": {"type": "number"},
    "count": {"type": "integer"},
    "done": {"type": "boolean"},
    "owner": {"$ref": "#/$defs/Person"},
    "watchers": {"type": "array", "items": {"$ref": "#/$defs/Person"}},
    "steps": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "text": {"type": "string"},
          "kind": {"anyOf": [{"type": "string", "enum": ["manual", "auto"]}, {"type": "null"}]}
        },
        "required": ["text", "kind"],
        "additionalProperties": false
      }
    },
    "meta": {"anyOf": [{"$ref": "#/$defs/Meta"}, {"type": "null"}]}
  },
  "required": ["title", "priority", "due", "estimate_hours", "count", "done", "owner", "watchers", "steps", "meta"],
  "additionalProperties": false,
  "$defs": {
    "Person": {
      "type": "object",
      "properties": {"name": {"type": "string"}, "email": {"type": "string", "format": "email"}},
      "required": ["name", "email"],
      "additionalProperties": false
    },
    "Meta": {
      "type": "object",
      "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
      "required": ["tags"],
      "additionalProperties": false
    }
  }
}`

func TestGenerateConforms(t *testing.T) {
	for _, c := range generateCases {
		t.Run(c.name, func(t *testing.T) {
			doc, err := schema.Generate([]byte(c.schema), "plan the launch party")
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			s, err := schema.Compile([]byte(c.schema))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(doc); err != nil {
				t.Fatalf("generated %s does not validate: %v", doc, err)
			}
			again, err := schema.Generate([]byte(c.schema), "plan the launch party")
			if err != nil || !bytes.Equal(doc, again) {
				t.Fatalf("Generate is not deterministic: %s then %s (%v)", doc, again, err)
			}
		})
	}
}

func TestGenerateUsesSeedAndSchemaOrder(t *testing.T) {
	doc, err := schema.Generate([]byte(openAIStrict), "  plan   the\tlaunch ")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	if !strings.HasPrefix(s, `{"title":"plan the launch","priority":"low","due":"2025-01-01",`) {
		t.Errorf("document does not follow the schema's order, first enum value and the normalised seed: %s", s)
	}
	if !strings.Contains(s, `"email":"plan.the.launch@example.com"`) {
		t.Errorf("email not built from the seed: %s", s)
	}
	var v map[string]any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	if steps, _ := v["steps"].([]any); len(steps) != 1 {
		t.Errorf("steps = %v, want exactly one item (minItems 0 → one item)", v["steps"])
	}
	if v["meta"] == nil {
		t.Errorf("meta is null; the non-null anyOf branch should be preferred: %s", s)
	}
}

func TestGenerateSeedChangesStrings(t *testing.T) {
	a, err := schema.Generate([]byte(`{"type":"string"}`), "first")
	if err != nil {
		t.Fatal(err)
	}
	b, err := schema.Generate([]byte(`{"type":"string"}`), "second")
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != `"first"` || string(b) != `"second"` {
		t.Fatalf("got %s and %s, want the seeds", a, b)
	}
	empty, err := schema.Generate([]byte(`{"type":"string"}`), "   ")
	if err != nil || string(empty) != `"example"` {
		t.Fatalf("blank seed gave %s (%v), want \"example\"", empty, err)
	}
}

func TestGenerateFailsRatherThanLie(t *testing.T) {
	cases := []struct{ name, schema string }{
		{"false", `false`},
		{"impossible pattern", `{"type":"string","pattern":"^zz[0-9]{3}q$"}`},
		{"no multiple in range", `{"type":"integer","minimum":1,"maximum":4,"multipleOf":5}`},
		{"not", `{"not":{"type":"string"}}`},
		{"invalid schema", `{"type":"strin"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc, err := schema.Generate([]byte(c.schema), "seed")
			if err == nil {
				t.Fatalf("Generate(%s) = %s, want an error", c.schema, doc)
			}
		})
	}
}
