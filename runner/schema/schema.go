// Package schema compiles and checks the JSON Schemas that clients send for
// structured output, and generates conforming instances for the offline
// provider.
//
// Structured output is a promise to the client: a reply that claims to match
// the schema must match it. The agent therefore validates every structured
// answer with this package before a single byte of it is sent.
//
// A schema is checked before its run exists, so no run timeout covers it:
// CheckContext and CompileContext stop when the request's context ends and
// refuse a schema whose check takes longer than CheckBudget (2 s). Numbers
// are checked on the bytes before the library sees them, in schemas and in
// answers alike (numbers.go), and a panic in the library is the input's
// refusal, never the caller's.
package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// location is the name the compiled schema is registered under. It is never
// fetched: it only gives the compiler an absolute base for local "#/..."
// references.
const location = "urn:runedge:output-schema"

// Schema is a compiled JSON Schema, safe for concurrent use.
type Schema struct {
	compiled *jsonschema.Schema
	// levels[k] is the most subschema evaluations one value k levels
	// deep can cost (expand.go); bounds is why there is no such bound
	// (Check refuses the schema, Validate refuses every document).
	levels []int64
	bounds error
}

// Compile parses and compiles raw. Schemas without "$schema" are read as
// draft 2020-12 (what the OpenAI API documents). References must be local
// ("#/$defs/...", "#/definitions/..."): a schema that comes from a client
// must never make the server read a file or open a connection.
//
// Compilations are cached by the digest of raw (see cache.go), so the
// several places a request's schema is needed share one compilation.
//
// Compile is CompileContext for callers without a request: the agent and
// the offline generator, which compile a schema the run stage's Check has
// compiled (and cached) already.
func Compile(raw json.RawMessage) (*Schema, error) {
	return CompileContext(context.Background(), raw)
}

// CompileContext is Compile within ctx and CheckBudget: when ctx ends it
// returns the context's cause; when the budget is spent, a refusal
// (ErrBounds).
func CompileContext(ctx context.Context, raw json.RawMessage) (*Schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("schema: empty schema")
	}
	k := digest(raw)
	if s := compiled.get(k); s != nil {
		return s, nil
	}
	ctx, cancel := context.WithTimeoutCause(ctx, CheckBudget, errBudget)
	defer cancel()
	s, err := compile(ctx, raw)
	if err != nil {
		return nil, err
	}
	compiled.put(k, s)
	return s, nil
}

// compile does the work of Compile, uncached. Its numbers are checked on
// the bytes first (numbers.go) and its subschemas counted (budget.go), so
// that what the library does with it is bounded; ctx is checked between
// the steps and before each pattern the library compiles. A panic in the
// library is the schema's refusal (ErrBounds), not the request's end.
func compile(ctx context.Context, raw json.RawMessage) (*Schema, error) {
	if bad := badNumber(raw); bad != "" {
		return nil, refuse("the schema has %s", bad)
	}
	return compileJSON(ctx, raw)
}

// compileJSON is compile after the numbers are checked.
func compileJSON(ctx context.Context, raw json.RawMessage) (s *Schema, err error) {
	defer func() {
		if p := recover(); p != nil {
			s, err = nil, refuse("the schema cannot be compiled: the JSON Schema library failed on it (%v)", p)
		}
	}()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema: not valid JSON: %w", err)
	}
	if err := countSubschemas(ctx, doc); err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// Formats are checked: a "date" that is not a date would break the
	// client that asked for one just as a wrong type would.
	c.AssertFormat()
	c.UseLoader(noRemote{})
	re := &patterns{ctx: ctx}
	c.UseRegexpEngine(re.compile)
	if err := c.AddResource(location, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	cs, err := c.Compile(location)
	re.done.Store(true)
	if err != nil {
		if err := budgetSpent(ctx); err != nil {
			return nil, err
		}
		return nil, compileError(err)
	}
	if err := budgetSpent(ctx); err != nil {
		return nil, err
	}
	levels, bounds := evaluationsPerLevel(doc)
	return &Schema{compiled: cs, levels: levels, bounds: bounds}, nil
}

// Validate checks that doc is JSON and satisfies the schema. The error names
// each place the document failed, as JSON pointers ("at '/items/0/price':
// got string, want number").
//
// Validation has a budget: a document nesting deeper than MaxInstanceDepth,
// or one whose values times the evaluations each may cost (expand.go) is
// over MaxValidationCost, is refused before the validator runs, so no
// document pins a core.
//
// Its numbers are checked on the bytes first, as a schema's are (numbers.go):
// one over MaxNumberLength characters or outside float64's range is refused
// unvalidated. A panic in the library is a refusal too, never the agent's.
func (s *Schema) Validate(doc []byte) error {
	if s.bounds != nil {
		return fmt.Errorf("output cannot be validated: %w", s.bounds)
	}
	if jsonDepth(doc, MaxInstanceDepth) > MaxInstanceDepth {
		return fmt.Errorf("output nests deeper than %d levels", MaxInstanceDepth)
	}
	if bad := badNumber(doc); bad != "" {
		return fmt.Errorf("output has %s", bad)
	}
	return s.validate(doc)
}

// validate is Validate after the depth and the numbers are checked.
func (s *Schema) validate(doc []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("output cannot be validated: the JSON Schema library failed on it (%v)", p)
		}
	}()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("output is not valid JSON: %w", err)
	}
	if cost := s.cost(v); cost > MaxValidationCost {
		return budgetError(cost)
	}
	if err := s.compiled.Validate(v); err != nil {
		return fmt.Errorf("output does not match the schema: %s", describe(err))
	}
	return nil
}

// noRemote refuses every reference the compiler cannot resolve inside the
// schema itself (the metaschemas are built into the library).
type noRemote struct{}

func (noRemote) Load(url string) (any, error) {
	return nil, fmt.Errorf("only local references (#/...) are allowed, not %q", url)
}

// compileError rewords the compiler's errors: they mention the internal
// location and, for metaschema failures, the whole metaschema path, neither
// of which helps the client who wrote the schema.
func compileError(err error) error {
	var sv *jsonschema.SchemaValidationError
	if errors.As(err, &sv) {
		return fmt.Errorf("schema: invalid schema: %s", describe(sv.Err))
	}
	var load *jsonschema.LoadURLError
	if errors.As(err, &load) {
		return fmt.Errorf("schema: cannot resolve $ref: %v", load.Err)
	}
	return fmt.Errorf("schema: %s", strings.ReplaceAll(err.Error(), location, "schema"))
}

// maxLeaves bounds the failing places an error message lists.
const maxLeaves = 20

// describe flattens a validation error tree into its leaves, the places
// where the instance actually failed; the inner nodes only repeat "anyOf
// failed" or "allOf failed".
func describe(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var leaves []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			msg := e.Error()
			if rest, ok := strings.CutPrefix(msg, "at '': "); ok {
				msg = "at the top level: " + rest
			}
			leaves = append(leaves, msg)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	// The library walks maps, so the order of siblings varies; sorted, the
	// same document always gets the same message.
	slices.Sort(leaves)
	// A message names a few places, not thousands: a schema that applies
	// one subschema many times fails in as many places.
	if n := len(leaves); n > maxLeaves {
		leaves = append(leaves[:maxLeaves], fmt.Sprintf("and %d more", n-maxLeaves))
	}
	return strings.Join(leaves, "; ")
}
