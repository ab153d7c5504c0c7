package schema

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// resolve flattens the keywords that combine schemas — $ref, allOf, anyOf,
// oneOf — into one schema with none of them at the top, so the type-specific
// builders see plain keywords. anyOf/oneOf take their first branch that is
// not only "null" (an instance of it also satisfies the whole), allOf merges
// every branch, and $ref is replaced by its target merged with its siblings.
func (g *generator) resolve(sch *object, st state) (*object, state, error) {
	for range maxDepth {
		if ref, ok := sch.vals["$ref"].(string); ok {
			target, err := g.lookup(ref, st)
			if err != nil {
				return nil, st, err
			}
			st.refs++
			sch = merge(target, without(sch, "$ref"))
			continue
		}
		if branches, ok := sch.vals["allOf"].([]any); ok {
			merged := without(sch, "allOf")
			refs := st.refs
			for _, b := range branches {
				bs, err := asSchema(b, st)
				if err != nil {
					return nil, st, err
				}
				rb, bst, err := g.resolve(bs, st)
				if err != nil {
					return nil, st, err
				}
				refs = max(refs, bst.refs)
				merged = merge(merged, rb)
			}
			st.refs = refs
			sch = merged
			continue
		}
		if kw, branches := alternatives(sch); kw != "" {
			b, err := asSchema(pickBranch(branches, st.minimal()), st)
			if err != nil {
				return nil, st, err
			}
			sch = merge(b, without(sch, kw))
			continue
		}
		return sch, st, nil
	}
	return nil, st, fmt.Errorf("schema: %s: too many nested $ref/allOf/anyOf/oneOf", st.where())
}

func alternatives(sch *object) (string, []any) {
	for _, kw := range []string{"anyOf", "oneOf"} {
		if b, ok := sch.vals[kw].([]any); ok && len(b) > 0 {
			return kw, b
		}
	}
	return "", nil
}

// pickBranch prefers the first branch that can hold a value other than
// null: for the nullable fields strict schemas spell as anyOf [T, null], the
// instance then shows T. Deep in a recursive schema (minimal) it prefers the
// opposite, a branch that ends the recursion: null, else one without $ref.
func pickBranch(branches []any, minimal bool) any {
	isNull := func(b any) bool {
		o, ok := b.(*object)
		return ok && o.vals["type"] == "null"
	}
	if minimal {
		for _, b := range branches {
			if isNull(b) {
				return b
			}
		}
		for _, b := range branches {
			if o, ok := b.(*object); ok {
				if _, ref := o.vals["$ref"]; !ref {
					return b
				}
			}
		}
		return branches[0]
	}
	for _, b := range branches {
		if _, ok := b.(*object); ok && !isNull(b) {
			return b
		}
	}
	return branches[0]
}

// lookup resolves a local reference ("#", "#/$defs/x", "#/definitions/x",
// any JSON pointer into the schema). Compile has already refused remote ones.
func (g *generator) lookup(ref string, st state) (*object, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, fmt.Errorf("schema: %s: only local references are supported, not %q", st.where(), ref)
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil, fmt.Errorf("schema: %s: bad reference %q: %w", st.where(), ref, err)
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return nil, fmt.Errorf("schema: %s: anchors (%q) are not supported (use #/$defs/…)", st.where(), ref)
	}
	cur := g.root
	if frag != "" {
		for _, tok := range strings.Split(frag[1:], "/") {
			tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
			switch x := cur.(type) {
			case *object:
				cur, ok = x.vals[tok]
			case []any:
				i, err := strconv.Atoi(tok)
				ok = err == nil && i >= 0 && i < len(x)
				if ok {
					cur = x[i]
				}
			default:
				ok = false
			}
			if !ok {
				return nil, fmt.Errorf("schema: %s: reference %q not found", st.where(), ref)
			}
		}
	}
	return asSchema(cur, st)
}

func without(sch *object, kw string) *object {
	c := &object{vals: make(map[string]any, len(sch.vals))}
	for _, k := range sch.keys {
		if k != kw {
			c.set(k, sch.vals[k])
		}
	}
	return c
}

// merge combines two schemas that must both hold. It is not a full schema
// intersection; it covers what real schemas combine (properties, required,
// bounds, types, additionalProperties false). Anything it gets wrong is
// caught by the final validation in Generate.
func merge(base, extra *object) *object {
	out := base.clone()
	for _, k := range extra.keys {
		ev := extra.vals[k]
		bv, ok := out.vals[k]
		if !ok {
			out.set(k, ev)
			continue
		}
		switch k {
		case "properties", "patternProperties", "$defs", "definitions":
			out.set(k, mergeMembers(bv, ev))
		case "required":
			out.set(k, union(bv, ev))
		case "type":
			if t := intersectTypes(bv, ev); t != nil {
				out.set(k, t)
			}
		case "additionalProperties", "unevaluatedProperties":
			if ev == false {
				out.set(k, false)
			}
		case "minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties":
			if greater(ev, bv) {
				out.set(k, ev)
			}
		case "maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties":
			if greater(bv, ev) {
				out.set(k, ev)
			}
		}
	}
	return out
}

func mergeMembers(a, b any) any {
	ao, aok := a.(*object)
	bo, bok := b.(*object)
	if !aok || !bok {
		return a
	}
	out := ao.clone()
	for _, k := range bo.keys {
		if av, ok := out.vals[k]; ok {
			out.set(k, &object{keys: []string{"allOf"}, vals: map[string]any{"allOf": []any{av, bo.vals[k]}}})
		} else {
			out.set(k, bo.vals[k])
		}
	}
	return out
}

func union(a, b any) any {
	as, _ := a.([]any)
	bs, _ := b.([]any)
	out := append([]any(nil), as...)
	seen := map[any]bool{}
	for _, v := range as {
		seen[v] = true
	}
	for _, v := range bs {
		if s, ok := v.(string); ok && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func typeList(t any) []string {
	switch x := t.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// intersectTypes keeps the types both allow (an integer is also a number).
// It returns nil when they share none, leaving the base's type in place.
func intersectTypes(a, b any) any {
	var out []any
	add := func(t string) {
		for _, o := range out {
			if o == t {
				return
			}
		}
		out = append(out, t)
	}
	for _, t := range typeList(a) {
		for _, x := range typeList(b) {
			switch {
			case t == x:
				add(t)
			case t == "integer" && x == "number", t == "number" && x == "integer":
				add("integer")
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
