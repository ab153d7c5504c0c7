package schema_test

import (
	"strings"
	"testing"

	"github.com/runedge/runedge/runner/schema"
)

func TestCompileRefusesBadSchemas(t *testing.T) {
	cases := []struct {
		name, raw, want string
	}{
		{"empty", ``, "empty schema"},
		{"not json", `{"type":`, "not valid JSON"},
		{"bad type", `{"type": 12}`, "at '/type'"},
		{"bad regex", `{"type":"string","pattern":"("}`, "at '/pattern'"},
		{"remote ref", `{"$ref": "https://example.com/s.json"}`, "only local references"},
		{"file ref", `{"$ref": "file:///etc/passwd"}`, "only local references"},
		{"missing def", `{"$ref": "#/$defs/nope"}`, "not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := schema.Compile([]byte(c.raw))
			if err == nil {
				t.Fatalf("Compile(%s) succeeded, want an error containing %q", c.raw, c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Compile(%s) error %q does not contain %q", c.raw, err, c.want)
			}
			if strings.Contains(err.Error(), "urn:runedge") {
				t.Errorf("error %q leaks the internal schema location", err)
			}
		})
	}
}

func TestValidateSaysWhere(t *testing.T) {
	s, err := schema.Compile([]byte(`{
		"type": "object",
		"properties": {
			"items": {"type": "array", "items": {"type": "object", "properties": {"price": {"type": "number"}}}},
			"day": {"type": "string", "format": "date"}
		},
		"required": ["items", "day"],
		"additionalProperties": false
	}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, doc string
		want      []string // substrings of the error; none means valid
	}{
		{"valid", `{"items":[{"price":1.5}],"day":"2025-02-03"}`, nil},
		{"wrong type deep", `{"items":[{"price":"cheap"}],"day":"2025-02-03"}`, []string{"at '/items/0/price'", "want number"}},
		{"bad format", `{"items":[],"day":"tomorrow"}`, []string{"at '/day'", "date"}},
		{"missing and extra", `{"items":[],"extra":1}`, []string{"at the top level", "day", "extra"}},
		{"not json", `{"items":`, []string{"not valid JSON"}},
		{"trailing data", `{"items":[],"day":"2025-02-03"} {}`, []string{"not valid JSON"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := s.Validate([]byte(c.doc))
			if c.want == nil {
				if err != nil {
					t.Fatalf("Validate(%s) = %v, want nil", c.doc, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%s) = nil, want an error", c.doc)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate(%s) error %q does not contain %q", c.doc, err, w)
				}
			}
		})
	}
}

func TestValidateMessageIsStable(t *testing.T) {
	s, err := schema.Compile([]byte(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"c":{"type":"number"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte(`{"a":"x","b":"y","c":"z"}`)
	first := s.Validate(doc).Error()
	for range 20 {
		if got := s.Validate(doc).Error(); got != first {
			t.Fatalf("message changed between calls:\n%s\n%s", first, got)
		}
	}
}
