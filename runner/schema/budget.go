package schema

import (
	"context"
	"errors"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Checking a client's schema happens before its run exists, so no run
// timeout covers it: it has a budget of its own, and it stops when the
// request's context ends.
const (
	// CheckBudget bounds the time one schema's check and compilation may
	// take (Check, Compile). Past it the schema is refused (ErrBounds).
	// The limits below keep the slowest schemas Check accepts well under
	// it (10,000 subschemas: about 0.6 s of one core), so it is met only
	// on a starved machine. The library's compilation cannot be
	// interrupted: the budget is checked before each pattern it compiles
	// and between the steps.
	CheckBudget = 2 * time.Second
	// MaxSubschemas bounds the subschemas one schema holds. The library
	// looks each one up in a list while it compiles, so its compilation is
	// quadratic in them: 125,000 empty subschemas (`anyOf` of 250 KB of
	// `{}`) took minutes. OpenAI documents at most 5,000 object properties
	// per schema; 5,000 subschemas compile in about 0.17 s of one core,
	// 10,000 in 0.6 s.
	MaxSubschemas = 10_000
)

// errBudget is the cause of a check's context when CheckBudget is spent.
var errBudget = errors.New("schema check budget spent")

// budgetSpent is nil while ctx is live; after, it is the refusal (ErrBounds)
// when the budget ran out, or the context's error when the request ended.
func budgetSpent(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	if cause := context.Cause(ctx); errors.Is(cause, errBudget) {
		return refuse("checking the schema took longer than %s", CheckBudget)
	}
	return context.Cause(ctx)
}

// patterns is the compiler's regular-expression engine for one
// compilation: it stops the compilation (the library calls it for every
// pattern, the slowest part of a compile) once ctx ends, and after the
// compilation it only compiles, so validation is never cut short by it.
type patterns struct {
	ctx  context.Context
	done atomic.Bool
}

func (p *patterns) compile(s string) (jsonschema.Regexp, error) {
	if !p.done.Load() {
		if err := budgetSpent(p.ctx); err != nil {
			return nil, err
		}
	}
	return regexp.Compile(s)
}

// subschemaKeywords are the keywords whose value is a subschema, a list of
// subschemas (the array forms) or a map of names to subschemas (the map
// forms), in every draft the compiler reads.
var (
	oneSubschema = []string{"additionalProperties", "unevaluatedProperties", "propertyNames",
		"items", "additionalItems", "contains", "unevaluatedItems", "not", "if", "then", "else",
		"contentSchema"}
	listSubschemas = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	mapSubschemas  = []string{"properties", "patternProperties", "dependentSchemas",
		"dependencies", "$defs", "definitions"}
)

// countSubschemas refuses (ErrBounds) a schema of more than MaxSubschemas
// subschemas, before the compiler sees it, and stops when ctx ends.
func countSubschemas(ctx context.Context, doc any) error {
	n := 0
	var walk func(v any) error
	walk = func(v any) error {
		m, ok := v.(map[string]any)
		if _, b := v.(bool); !ok && !b {
			return nil
		}
		if n++; n > MaxSubschemas {
			return refuse("the schema has more than %d subschemas", MaxSubschemas)
		}
		if n%1024 == 0 {
			if err := budgetSpent(ctx); err != nil {
				return err
			}
		}
		for _, kw := range oneSubschema {
			if err := walk(m[kw]); err != nil {
				return err
			}
		}
		for _, kw := range listSubschemas {
			list, _ := m[kw].([]any)
			for _, s := range list {
				if err := walk(s); err != nil {
					return err
				}
			}
		}
		for _, kw := range mapSubschemas {
			members, _ := m[kw].(map[string]any)
			for _, s := range members {
				if err := walk(s); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(doc)
}
