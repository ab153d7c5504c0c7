package schema

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chain is a schema of n $defs, each applying the next twice through the
// keyword holder wraps around a $ref (holder has one %s per reference):
// the validator evaluates the last one 2^n times.
func chain(n int, holder string) string {
	var b strings.Builder
	b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range n {
		next := `{"type":"string"}`
		if i+1 < n {
			next = `{"$ref":"#/$defs/d` + strconv.Itoa(i+1) + `"}`
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"d` + strconv.Itoa(i) + `":` + strings.ReplaceAll(holder, "%s", next))
	}
	b.WriteString("}}")
	return b.String()
}

// TestCheckBoundsEveryKeyword: $ref fan-out through each keyword that
// holds subschemas is refused, not only through allOf/anyOf/oneOf.
func TestCheckBoundsEveryKeyword(t *testing.T) {
	for name, holder := range map[string]string{
		"if/then/else":          `{"if":%s,"then":%s,"else":%s}`,
		"not":                   `{"allOf":[{"not":{"not":%s}},{"not":{"not":%s}}]}`,
		"dependentSchemas":      `{"dependentSchemas":{"a":%s,"b":%s}}`,
		"propertyNames":         `{"propertyNames":{"allOf":[%s,%s]}}`,
		"contains":              `{"contains":%s,"items":%s}`,
		"unevaluatedItems":      `{"prefixItems":[%s],"unevaluatedItems":%s}`,
		"unevaluatedProperties": `{"properties":{"a":%s},"unevaluatedProperties":%s}`,
		"prefixItems":           `{"prefixItems":[%s],"items":%s}`,
		"patternProperties":     `{"patternProperties":{"a":%s,"b":%s}}`,
		"additionalProperties":  `{"patternProperties":{"a":%s},"additionalProperties":%s}`,
		"$ref sibling":          `{"$ref":"#/$defs/leaf","not":{"not":%s},"allOf":[%s]}`,
	} {
		t.Run(name, func(t *testing.T) {
			raw := chain(24, holder)
			raw = strings.Replace(raw, `"$defs":{`, `"$defs":{"leaf":{},`, 1)
			start := time.Now()
			_, err := Check([]byte(raw))
			if !errors.Is(err, ErrBounds) || !strings.Contains(err.Error(), "subschemas") {
				t.Fatalf("Check(%d bytes) = %v, want ErrBounds on the subschema count", len(raw), err)
			}
			if el := time.Since(start); el > time.Second {
				t.Fatalf("Check took %s", el)
			}
		})
	}
}

// TestHostileSchemaEndsWithinBudget is the reported attack: a 2 KB schema
// whose if/then/else $refs double at each level. Check must refuse it, and
// admission plus validation must end within a second.
func TestHostileSchemaEndsWithinBudget(t *testing.T) {
	raw := chain(26, `{"if":%s,"then":%s,"else":%s}`)
	if len(raw) > 2500 {
		t.Fatalf("the schema is %d bytes; the attack is about 2 KB", len(raw))
	}
	start := time.Now()
	if _, err := Check([]byte(raw)); !errors.Is(err, ErrBounds) {
		t.Errorf("Check = %v, want ErrBounds", err)
	}
	// The agent compiles without Check; its validation has the budget.
	s, err := Compile([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate([]byte(`"x"`)); err == nil {
		t.Error("Validate accepted a document against a schema beyond the bounds")
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("admission and validation took %s; the bound is 1s", el)
	}
}

// TestValidationBudget: a document whose values times the evaluations
// each costs is over MaxValidationCost is refused unvalidated, and a deep
// one before it is decoded.
func TestValidationBudget(t *testing.T) {
	// 2^11 evaluations per item
	raw := strings.Replace(chain(11, `{"allOf":[%s,%s]}`), `{"$ref":"#/$defs/d0",`, `{"items":{"$ref":"#/$defs/d0"},`, 1)
	s, err := Check([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	big := "[" + strings.Repeat(`"x",`, 2000) + `"x"]`
	if err := s.Validate([]byte(big)); err == nil || !strings.Contains(err.Error(), "budget") {
		t.Errorf("Validate of 201 values = %.200v, want the budget refusal", err)
	}
	if err := s.Validate([]byte(`["x","x"]`)); err != nil {
		t.Errorf("Validate of 2 values = %.200v", err)
	}
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	list, _ := Check([]byte(`{"type":"array","items":{"$ref":"#"}}`))
	if err := list.Validate([]byte(deep)); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Errorf("Validate of 100 levels = %v, want the depth refusal", err)
	}
	if err := list.Validate([]byte(strings.Repeat("[", 60) + strings.Repeat("]", 60))); err != nil {
		t.Errorf("Validate of 60 levels = %v", err)
	}
}

// TestCheckAcceptsRecursiveTrees: the expansion counts per instance path,
// so a tree whose nodes recurse through several properties stays linear.
func TestCheckAcceptsRecursiveTrees(t *testing.T) {
	for _, s := range []string{
		`{"type":"object","properties":{"left":{"$ref":"#"},"right":{"$ref":"#"},"value":{"type":"integer"}}}`,
		`{"$defs":{"n":{"anyOf":[{"type":"null"},{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}},"required":["next"]}]}},"$ref":"#/$defs/n"}`,
		`{"$defs":{"ui":{"$anchor":"ui","type":"object","properties":{"children":{"type":"array","items":{"$ref":"#ui"}}}}},"$ref":"#ui"}`,
	} {
		if _, err := Check([]byte(s)); err != nil {
			t.Errorf("Check(%s) = %v", s, err)
		}
	}
}

// TestValidationBudgetCountsBytes: a long string costs in proportion to its
// length at each evaluation (pattern, format, length), so one string of
// 256 KiB against a leaf evaluated 2^11 times is over the budget, not one
// value's worth of it.
func TestValidationBudgetCountsBytes(t *testing.T) {
	raw := strings.Replace(chain(11, `{"allOf":[%s,%s]}`), `{"type":"string"}`, `{"type":"string","pattern":"^(a|b)*$"}`, 1)
	s, err := Check([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	doc := `"` + strings.Repeat("ab", 128<<10) + `"`
	start := time.Now()
	err = s.Validate([]byte(doc))
	if el := time.Since(start); el > time.Second {
		t.Fatalf("Validate took %s; the bound is 1s", el)
	}
	if err == nil || !strings.Contains(err.Error(), "budget") {
		t.Errorf("Validate = %.200v, want the budget refusal", err)
	}
	if err := s.Validate([]byte(`"abab"`)); err != nil {
		t.Errorf("a short string: %v", err)
	}
}

// TestBudgetCountsWholeValueKeywords: const, enum and uniqueItems read
// whole values at each evaluation, and count so.
func TestBudgetCountsWholeValueKeywords(t *testing.T) {
	big := `"` + strings.Repeat("x", 64<<10) + `"`
	constLeaf := strings.Replace(chain(11, `{"allOf":[%s,%s]}`), `{"type":"string"}`, `{"const":`+big+`}`, 1)
	if _, err := Check([]byte(constLeaf)); !errors.Is(err, ErrBounds) {
		t.Errorf("a 64 KiB const evaluated 2^11 times: Check = %v, want ErrBounds", err)
	}
	unique := strings.Replace(chain(11, `{"allOf":[%s,%s]}`), `{"type":"string"}`, `{"type":"array","uniqueItems":true}`, 1)
	s, err := Check([]byte(unique))
	if err != nil {
		t.Fatal(err)
	}
	doc := "[" + strings.Repeat(`"abcdefgh",`, 20_000) + `"x"]`
	start := time.Now()
	if err := s.Validate([]byte(doc)); err == nil || !strings.Contains(err.Error(), "budget") {
		t.Errorf("Validate = %.200v, want the budget refusal", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("Validate took %s", el)
	}
}
