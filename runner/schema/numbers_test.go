package schema

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// hugeKeywords is a schema of n keywords whose numbers have huge exponents:
// `{"allOf":[{"minimum":1e1000000},…]}`, 22 bytes a keyword.
func hugeKeywords(n int, lit string) []byte {
	return []byte(`{"allOf":[` + strings.TrimSuffix(strings.Repeat(`{"minimum":`+lit+`},`, n), ",") + `]}`)
}

// TestHugeNumbersRefusedFast: a schema of 8,000 keywords whose numbers
// have huge exponents (176 KB, under MaxSchemaBytes) is refused, as out of
// bounds, in milliseconds. Before, each number cost the library about 30 ms
// to parse into a big.Rat: the schema took minutes of one core, and no
// bound counted it.
func TestHugeNumbersRefusedFast(t *testing.T) {
	for _, lit := range []string{"1e1000000", "-1E+1000000", "1e-1000000", "5e99999999"} {
		raw := hugeKeywords(8000, lit)
		begun := time.Now()
		_, err := CheckContext(context.Background(), raw)
		el := time.Since(begun)
		if !errors.Is(err, ErrBounds) {
			t.Fatalf("%s: Check = %v, want ErrBounds", lit, err)
		}
		if !strings.Contains(err.Error(), "float64's range") {
			t.Errorf("%s: message %q does not say why", lit, err)
		}
		if el > 2*time.Second {
			t.Errorf("%s: refused after %s; the bound is 2s (a few ms are expected)", lit, el)
		}
	}
}

// TestNumbersOnTheBytes: the literals refused and the ones kept, in a
// schema and in an answer.
func TestNumbersOnTheBytes(t *testing.T) {
	refused := []string{
		"1e309", "-1e309", "1e-400", "1e401", "0e99999", "1.5e+1000",
		"0." + strings.Repeat("0", 40) + "1",
		strings.Repeat("9", MaxNumberLength+1),
	}
	kept := []string{
		"0", "-0", "1", "-12.5", "1.7976931348623157e308", "5e-324", "2.2250738585072014e-308",
		"18446744073709551615", "1e308", "0.0001", "1E2", "123456789012345678901234567890",
	}
	for _, lit := range refused {
		if bad := badNumber([]byte(`{"a":[1,` + lit + `]}`)); bad == "" {
			t.Errorf("%s: not refused", lit)
		}
	}
	for _, lit := range kept {
		if bad := badNumber([]byte(`{"a":[1,` + lit + `]}`)); bad != "" {
			t.Errorf("%s: refused (%s)", lit, bad)
		}
	}
	// In strings, names and escapes, a number is text.
	for _, doc := range []string{`{"1e1000000":"1e1000000"}`, `["\"1e1000000", "\\", 2]`, `{"pattern":"^[0-9]{1,99999999999999999999999999999999999999999}$"}`} {
		if bad := badNumber([]byte(doc)); bad != "" {
			t.Errorf("%s: refused (%s)", doc, bad)
		}
	}
	if _, err := Check([]byte(`{"type":"number","default":"1e1000000","maximum":1e308}`)); err != nil {
		t.Errorf("a schema of numbers within range: %v", err)
	}
}

// TestHugeNumbersInAnAnswer: an answer of numbers with huge exponents is
// invalid output, refused in milliseconds. Before, a 10 KB answer of them
// took the validator about 30 CPU-seconds.
func TestHugeNumbersInAnAnswer(t *testing.T) {
	s, err := Check([]byte(`{"type":"array","items":{"type":"number","minimum":0}}`))
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte(`[` + strings.TrimSuffix(strings.Repeat(`1e1000000,`, 1000), ",") + `]`)
	begun := time.Now()
	err = s.Validate(doc)
	if el := time.Since(begun); el > 2*time.Second {
		t.Errorf("refused after %s; the bound is 2s", el)
	}
	if err == nil || !strings.Contains(err.Error(), "output has a number") {
		t.Fatalf("Validate = %v, want the number refused", err)
	}
	if err := s.Validate([]byte(`[1.5, 1e300, 0]`)); err != nil {
		t.Errorf("numbers within range: %v", err)
	}
}

// TestLibraryPanicIsARefusal: `multipleOf: 1e10000000` is beyond what
// big.Rat parses, and the library dereferences the nil it gets, compiling
// the schema and validating a value against `multipleOf`. The number check
// refuses it first; behind it, the panic itself is the input's refusal
// (ErrBounds for a schema, an error for an answer), never the request's
// or the agent's end. Before, the request's connection was reset (a
// schema) or the agent panicked (an answer).
func TestLibraryPanicIsARefusal(t *testing.T) {
	raw := []byte(`{"type":"object","properties":{"n":{"type":"number","multipleOf":1e10000000}},"required":["n"],"additionalProperties":false}`)
	if _, err := Check(raw); !errors.Is(err, ErrBounds) || !strings.Contains(err.Error(), "float64's range") {
		t.Fatalf("Check = %v, want the number refused (ErrBounds)", err)
	}
	// Behind the number check: the library itself panics on it.
	if _, err := compileJSON(context.Background(), raw); !errors.Is(err, ErrBounds) || !strings.Contains(err.Error(), "library failed") {
		t.Fatalf("compileJSON = %v, want the library's panic as a refusal", err)
	}
	s, err := Check([]byte(`{"type":"number","multipleOf":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate([]byte(`1e10000000`)); err == nil || !strings.Contains(err.Error(), "output has a number") {
		t.Fatalf("Validate = %v, want the number refused", err)
	}
	if err := s.validate([]byte(`1e10000000`)); err == nil || !strings.Contains(err.Error(), "library failed") {
		t.Fatalf("validate = %v, want the library's panic as an error", err)
	}
}

// TestSubschemasBounded: a schema of more than MaxSubschemas subschemas is
// refused before the library compiles it. Before, an `anyOf` of 250 KB of
// `{}` (125,000 subschemas) took the library minutes, this one of 80,000
// about a minute: it looks each subschema up in a list.
func TestSubschemasBounded(t *testing.T) {
	raw := []byte(`{"anyOf":[` + strings.TrimSuffix(strings.Repeat(`{},`, 80_000), ",") + `]}`)
	begun := time.Now()
	_, err := Check(raw)
	if !errors.Is(err, ErrBounds) || !strings.Contains(err.Error(), "subschemas") {
		t.Fatalf("Check = %v, want the subschema bound", err)
	}
	if el := time.Since(begun); el > 2*time.Second {
		t.Errorf("refused after %s; the bound is 2s", el)
	}
	ok := []byte(`{"type":"object","properties":{` + strings.TrimSuffix(strings.Repeat(`"a":{"type":"string"},`, 1), ",") + `}}`)
	if _, err := Check(ok); err != nil {
		t.Fatal(err)
	}
}

// TestCheckHonoursContext: a request that has ended gets its context's
// error, not a refusal, and no compilation is left running for it.
func TestCheckHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	gone := errors.New("client gone")
	cancel(gone)
	// Distinct bytes: the cache must not answer for it.
	raw := []byte(`{"properties":{"x":{"pattern":"^ctx-test$"}},"title":"` + t.Name() + `"}`)
	if _, err := CheckContext(ctx, raw); !errors.Is(err, gone) {
		t.Fatalf("CheckContext = %v, want the context's cause", err)
	}
	// The budget: spent, it is a refusal.
	spent, stop := context.WithTimeoutCause(context.Background(), 0, errBudget)
	defer stop()
	<-spent.Done()
	if _, err := compile(spent, raw); !errors.Is(err, ErrBounds) || !strings.Contains(err.Error(), "took longer than") {
		t.Fatalf("compile past the budget = %v, want the budget refusal", err)
	}
	// And the schema compiles when there is time.
	if _, err := CheckContext(context.Background(), raw); err != nil {
		t.Fatal(err)
	}
}
