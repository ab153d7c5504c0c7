// Package jsonfast reads JSON members with gjson exactly as encoding/json
// would decode them into struct fields, or reports that it cannot be sure
// (ok false), so that the caller decodes with encoding/json instead. It is
// for hot paths whose inputs nearly always have one simple shape: the
// common shape costs a validity check and one pass, the rest what it cost
// before. Callers validate the document first (gjson.ValidBytes) and hold
// the two paths together with a differential test against encoding/json.
package jsonfast

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Members calls fn with the index in names of each member of object v that
// names a field (at most 32 names), and reports false (unsure) where
// encoding/json could read differently: an escaped member name, a name that
// matches a field only without regard to case (encoding/json matches
// those), a field given twice (the last one wins there), or fn returning
// false. Other members are skipped, as encoding/json skips them.
func Members(v gjson.Result, names []string, fn func(i int, v gjson.Result) bool) bool {
	if !v.IsObject() {
		return true // as ForEach: no member of an object to read
	}
	ok := true
	var seen uint32
	eachMember(v.Raw, func(key, val string) bool {
		k := key[1 : len(key)-1]
		if strings.IndexByte(k, '\\') >= 0 {
			ok = false
			return false
		}
		for i, n := range names {
			if k == n {
				if seen&(1<<i) != 0 {
					ok = false
					return false
				}
				seen |= 1 << i
				ok = fn(i, gjson.Parse(val))
				return ok
			}
			if strings.EqualFold(k, n) {
				ok = false
				return false
			}
		}
		return true
	})
	return ok
}

// Object calls fn on an object; null leaves the field as it is.
func Object(v gjson.Result, fn func(gjson.Result) bool) bool {
	switch {
	case v.Type == gjson.Null:
		return true
	case v.IsObject():
		return fn(v)
	}
	return false
}

// Array reads an array of objects into *dst (null makes it nil), each
// element with fn. The elements go into *dst's own array when it has
// room, so a caller that decodes one chunk after another into the same
// value allocates once; encoding/json too reuses a slice's array.
func Array[T any](v gjson.Result, dst *[]T, fn func(gjson.Result, *T) bool) bool {
	if v.Type == gjson.Null {
		*dst = nil
		return true
	}
	if !v.IsArray() {
		return false
	}
	ok := true
	out := (*dst)[:0]
	if out == nil {
		out = make([]T, 0, 1)
	}
	v.ForEach(func(_, e gjson.Result) bool {
		if !e.IsObject() {
			ok = false
			return false
		}
		out = append(out, *new(T))
		ok = fn(e, &out[len(out)-1])
		return ok
	})
	*dst = out
	return ok
}

// String reads a string; null leaves it as it is. A string with escapes or
// bytes that are not UTF-8 is decoded by encoding/json, which replaces what
// is invalid.
func String(v gjson.Result, dst *string) bool {
	switch v.Type {
	case gjson.Null:
		return true
	case gjson.String:
	default:
		return false
	}
	raw := v.Raw[1 : len(v.Raw)-1]
	if strings.IndexByte(raw, '\\') < 0 && utf8.ValidString(raw) {
		*dst = raw
		return true
	}
	return json.Unmarshal([]byte(v.Raw), dst) == nil
}

// Int reads an integer written without fraction or exponent, small enough
// for any int; null leaves it as it is.
func Int(v gjson.Result, dst *int) bool {
	if v.Type == gjson.Null {
		return true
	}
	raw := v.Raw
	if v.Type != gjson.Number || len(raw) > 18 {
		return false
	}
	n, neg := 0, false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '-' && i == 0:
			neg = true
		case c >= '0' && c <= '9':
			n = n*10 + int(c-'0')
		default:
			return false
		}
	}
	if neg {
		n = -n
	}
	*dst = n
	return true
}

// Bool reads true or false; null leaves it as it is.
func Bool(v gjson.Result, dst *bool) bool {
	switch v.Type {
	case gjson.Null:
	case gjson.True:
		*dst = true
	case gjson.False:
		*dst = false
	default:
		return false
	}
	return true
}

// Empty accepts an array that decodes to nothing: null or [].
func Empty(v gjson.Result) bool {
	return v.Type == gjson.Null || (v.IsArray() && len(v.Array()) == 0)
}
