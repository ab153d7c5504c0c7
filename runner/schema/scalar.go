package schema

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// str builds a string: a sensible value for well-known formats, otherwise
// the seed text fitted to minLength/maxLength. A pattern is met by trying a
// few candidates made from the seed; the generator does not invent strings
// from regular expressions.
func (g *generator) str(sch *object, st state) string {
	if f, ok := sch.vals["format"].(string); ok {
		if v, ok := g.format(f, st.variant); ok {
			return v
		}
	}
	base := g.text
	if st.variant > 0 {
		base += " " + strconv.Itoa(st.variant+1)
	}
	minLen, maxLen := intKeyword(sch, "minLength", 0), intKeyword(sch, "maxLength", -1)
	minLen = min(minLen, MaxGenerated+1) // longer fails in Generate
	fit := func(s string) string { return fitLength(s, base, minLen, maxLen) }
	if p, ok := sch.vals["pattern"].(string); ok {
		if re, err := regexp.Compile(p); err == nil {
			for _, c := range g.patternCandidates(base, st.variant) {
				if c = fit(c); re.MatchString(c) {
					return c
				}
			}
		}
	}
	return fit(base)
}

// fitLength pads s with repeats of fill up to minLen and cuts it to maxLen
// (both counted in code points, as JSON Schema counts them).
func fitLength(s, fill string, minLen, maxLen int) string {
	r := []rune(s)
	for len(r) < minLen {
		if len(r) > 0 {
			r = append(r, ' ')
		}
		r = append(r, []rune(fill)...)
	}
	if maxLen >= 0 && len(r) > maxLen {
		r = r[:maxLen]
		for len(r) > minLen && len(r) > 0 && r[len(r)-1] == ' ' {
			r = r[:len(r)-1]
		}
	}
	return string(r)
}

func (g *generator) patternCandidates(base string, variant int) []string {
	out := []string{base, g.slug("-"), g.slug("_"), strings.Join(g.words, ""), strings.ToUpper(g.slug("_"))}
	out = append(out, g.words...)
	n := strconv.Itoa(variant + 1)
	return append(out, "example", "a", "A", n, "a"+n, "A"+n, "")
}

// slug is the seed as lowercase letters and digits joined by sep.
func (g *generator) slug(sep string) string {
	var parts []string
	for _, w := range g.words {
		w = strings.Map(func(r rune) rune {
			if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
				return unicode.ToLower(r)
			}
			return -1
		}, w)
		if w != "" {
			parts = append(parts, w)
		}
	}
	if len(parts) == 0 {
		return "example"
	}
	return strings.Join(parts, sep)
}

// format returns a valid value for the formats clients commonly ask for.
func (g *generator) format(f string, variant int) (string, bool) {
	n := variant + 1
	switch f {
	case "date":
		return fmt.Sprintf("2025-01-%02d", 1+variant%28), true
	case "date-time":
		return fmt.Sprintf("2025-01-%02dT12:00:00Z", 1+variant%28), true
	case "time":
		return fmt.Sprintf("12:%02d:00Z", variant%60), true
	case "duration":
		return fmt.Sprintf("P%dD", n), true
	case "email", "idn-email":
		user := g.slug(".")
		if variant > 0 {
			user += strconv.Itoa(n)
		}
		return user + "@example.com", true
	case "uri", "iri", "uri-reference", "iri-reference", "url":
		path := g.slug("-")
		if variant > 0 {
			path += "-" + strconv.Itoa(n)
		}
		return "https://example.com/" + path, true
	case "uri-template":
		return "https://example.com/{id}", true
	case "hostname", "idn-hostname":
		if variant > 0 {
			return fmt.Sprintf("host%d.example.com", n), true
		}
		return "example.com", true
	case "ipv4":
		return fmt.Sprintf("192.0.2.%d", 1+variant%254), true
	case "ipv6":
		return fmt.Sprintf("2001:db8::%x", n), true
	case "uuid":
		sum := sha256.Sum256([]byte(g.text + "\x00" + strconv.Itoa(variant)))
		sum[6] = sum[6]&0x0f | 0x40 // version 4
		sum[8] = sum[8]&0x3f | 0x80 // RFC 4122 variant
		return fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16]), true
	case "json-pointer":
		return "/" + g.slug("-"), true
	case "relative-json-pointer":
		return "0", true
	case "regex":
		return regexp.QuoteMeta(g.words[0]), true
	}
	return "", false
}

// number picks the seed's word count (plus the variant) moved into the
// schema's bounds and onto its multipleOf grid. Exact rationals keep
// multipleOf 0.1 from failing on binary rounding.
func (g *generator) number(sch *object, integer bool, st state) (string, error) {
	want := big.NewRat(int64(len(g.words)+st.variant), 1)
	lo, loEx := lowerBound(sch)
	hi, hiEx := upperBound(sch)
	step := ratKeyword(sch, "multipleOf")
	if integer {
		if step == nil {
			step = big.NewRat(1, 1)
		} else {
			// k·p/q is an integer exactly when k is a multiple of q, so the
			// integer multiples of p/q are the multiples of p.
			step = new(big.Rat).SetInt(step.Num())
		}
	}
	var v *big.Rat
	if step != nil {
		k, err := onGrid(want, step, lo, loEx, hi, hiEx)
		if err != nil {
			return "", fmt.Errorf("schema: %s: %w", st.where(), err)
		}
		v = new(big.Rat).Mul(new(big.Rat).SetInt(k), step)
	} else {
		v = within(want, lo, loEx, hi, hiEx)
	}
	return formatRat(v), nil
}

// onGrid returns the multiplier k of step closest to want (rounded down)
// that keeps k·step within the bounds.
func onGrid(want, step, lo *big.Rat, loEx bool, hi *big.Rat, hiEx bool) (*big.Int, error) {
	k := floorDiv(want, step)
	if lo != nil {
		kLo := floorDiv(lo, step)
		if new(big.Rat).Mul(new(big.Rat).SetInt(kLo), step).Cmp(lo) < 0 || loEx {
			kLo.Add(kLo, big.NewInt(1))
		}
		if k.Cmp(kLo) < 0 {
			k = kLo
		}
	}
	if hi != nil {
		kHi := floorDiv(hi, step)
		if hiEx && new(big.Rat).Mul(new(big.Rat).SetInt(kHi), step).Cmp(hi) == 0 {
			kHi.Sub(kHi, big.NewInt(1))
		}
		if k.Cmp(kHi) > 0 {
			k = kHi
		}
	}
	v := new(big.Rat).Mul(new(big.Rat).SetInt(k), step)
	if (lo != nil && (v.Cmp(lo) < 0 || loEx && v.Cmp(lo) == 0)) ||
		(hi != nil && (v.Cmp(hi) > 0 || hiEx && v.Cmp(hi) == 0)) {
		return nil, fmt.Errorf("no multiple of %s lies within the bounds", step.RatString())
	}
	return k, nil
}

// within moves want into the bounds, stepping one unit inside exclusive
// bounds, or to the midpoint when the interval is narrower than that.
func within(want, lo *big.Rat, loEx bool, hi *big.Rat, hiEx bool) *big.Rat {
	one := big.NewRat(1, 1)
	mid := func() *big.Rat {
		m := new(big.Rat).Add(lo, hi)
		return m.Quo(m, big.NewRat(2, 1))
	}
	v := want
	if lo != nil && (v.Cmp(lo) < 0 || loEx && v.Cmp(lo) == 0) {
		v = new(big.Rat).Set(lo)
		if loEx {
			v.Add(v, one)
			if hi != nil && (v.Cmp(hi) > 0 || hiEx && v.Cmp(hi) == 0) {
				v = mid()
			}
		}
	}
	if hi != nil && (v.Cmp(hi) > 0 || hiEx && v.Cmp(hi) == 0) {
		v = new(big.Rat).Set(hi)
		if hiEx {
			v.Sub(v, one)
			if lo != nil && (v.Cmp(lo) < 0 || loEx && v.Cmp(lo) == 0) {
				v = mid()
			}
		}
	}
	return v
}

func floorDiv(a, b *big.Rat) *big.Int {
	q := new(big.Rat).Quo(a, b)
	f := new(big.Int).Div(q.Num(), q.Denom()) // Euclidean: floors for a positive denominator
	return f
}

// formatRat writes v as a plain decimal; v always has a finite expansion
// here (bounds and steps come from JSON decimals).
func formatRat(v *big.Rat) string {
	if v.IsInt() {
		return v.Num().String()
	}
	for p := 1; p <= 40; p++ {
		scaled := new(big.Rat).Mul(v, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(p)), nil)))
		if scaled.IsInt() {
			return v.FloatString(p)
		}
	}
	f, _ := v.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// lowerBound combines minimum and exclusiveMinimum (a number since draft 6,
// a boolean modifier of minimum in draft 4) into the stricter bound.
func lowerBound(sch *object) (*big.Rat, bool) {
	return bound(sch, "minimum", "exclusiveMinimum", 1)
}

func upperBound(sch *object) (*big.Rat, bool) {
	return bound(sch, "maximum", "exclusiveMaximum", -1)
}

// bound returns the stricter of the inclusive and exclusive bound; sign is
// +1 for lower bounds (larger is stricter) and -1 for upper ones.
func bound(sch *object, inclusive, exclusive string, sign int) (*big.Rat, bool) {
	in := ratKeyword(sch, inclusive)
	if b, ok := sch.vals[exclusive].(bool); ok {
		return in, b && in != nil
	}
	ex := ratKeyword(sch, exclusive)
	switch {
	case ex == nil:
		return in, false
	case in == nil || ex.Cmp(in)*sign >= 0:
		return ex, true
	}
	return in, false
}

func ratKeyword(sch *object, kw string) *big.Rat {
	n, ok := sch.vals[kw].(json.Number)
	if !ok {
		return nil
	}
	r, ok := new(big.Rat).SetString(n.String())
	if !ok {
		return nil
	}
	return r
}

// intKeyword reads a non-negative integer keyword (minLength, maxItems …).
func intKeyword(sch *object, kw string, def int) int {
	r := ratKeyword(sch, kw)
	if r == nil || !r.IsInt() || !r.Num().IsInt64() {
		return def
	}
	return int(r.Num().Int64())
}

// greater reports whether a and b are both numbers and a > b.
func greater(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if !aok || !bok {
		return false
	}
	ar, aok := new(big.Rat).SetString(an.String())
	br, bok := new(big.Rat).SetString(bn.String())
	return aok && bok && ar.Cmp(br) > 0
}
