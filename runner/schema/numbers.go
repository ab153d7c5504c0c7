package schema

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// The library turns every JSON number it compares or constrains with into
// a big.Rat, parsing the literal as written: `1e1000000` (9 bytes) costs
// about 30 ms of one core, so a schema of a few thousand such keywords, or
// an answer of such values, burned tens of CPU-seconds; `1e10000000` is
// beyond what big.Rat parses at all, and the library then dereferenced the
// nil it got (multipleOf: a panic). Numbers are therefore checked on the raw
// bytes, before the library sees them.
const (
	// MaxNumberLength bounds the characters of one number literal. A
	// float64 printed exactly needs at most 24 (-2.2250738585072014e-308),
	// an int64 or uint64 20; 40 leaves room for a decimal written in full.
	MaxNumberLength = 40
	// maxExponent bounds the exponent field of a literal: float64's
	// decimal exponents run from -324 to 308, and with at most
	// MaxNumberLength digits an exponent past ±400 can only name a value
	// outside that range (or zero written oddly).
	maxExponent = 400
)

// badNumber describes the first number literal of raw (outside strings)
// that is longer than MaxNumberLength or whose value is outside float64's
// range (overflows to ±Inf, or underflows to zero from a non-zero literal),
// or is "" when there is none. It does not decode raw and passes over what
// is not JSON (the decoder that follows refuses that). It reads each byte
// once: a 256 KiB schema takes well under a millisecond.
func badNumber(raw []byte) string {
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(raw) && isNumberByte(raw[j]) {
				j++
			}
			if why := numberProblem(raw[i:j]); why != "" {
				return fmt.Sprintf("a number at byte %d (%s) %s; numbers must have at most %d characters and lie within float64's range (about ±1.8e308, down to 5e-324)",
					i, quoteLiteral(raw[i:j]), why, MaxNumberLength)
			}
			i = j - 1
		}
	}
	return ""
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// numberProblem says what is wrong with one literal, or "".
func numberProblem(lit []byte) string {
	if len(lit) > MaxNumberLength {
		return fmt.Sprintf("of %d characters", len(lit))
	}
	e := -1
	for k, c := range lit {
		if c == 'e' || c == 'E' {
			e = k
			break
		}
	}
	if e < 0 {
		// A plain decimal of at most MaxNumberLength characters is
		// within range whatever its digits.
		return ""
	}
	exp, digits := 0, lit[e+1:]
	if len(digits) > 0 && (digits[0] == '+' || digits[0] == '-') {
		digits = digits[1:]
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return "" // not JSON: the decoder refuses it
		}
		if exp = exp*10 + int(c-'0'); exp > maxExponent {
			return "whose exponent is outside float64's range"
		}
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if errors.Is(err, strconv.ErrRange) || math.IsInf(f, 0) {
		return "whose value is outside float64's range"
	}
	if err == nil && f == 0 && nonZeroMantissa(lit[:e]) {
		return "whose value is too small for float64"
	}
	return ""
}

func nonZeroMantissa(m []byte) bool {
	for _, c := range m {
		if c >= '1' && c <= '9' {
			return true
		}
	}
	return false
}

// quoteLiteral is lit for a message, cut short when long.
func quoteLiteral(lit []byte) string {
	if len(lit) > 24 {
		return string(lit[:20]) + "..."
	}
	return string(lit)
}
