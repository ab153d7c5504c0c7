package jsonfast

import "strings"

// Walking an object's members and an array's elements over their raw
// text. An upstream's stream chunk has four members nobody reads (id,
// object, created, model) before the one that matters. The text has been
// validated (gjson.ValidBytes) by the caller, so the walk only finds where
// each value ends.

// eachMember calls fn with each member of the object obj (valid JSON,
// starting with '{'): the key as written, quotes included, and the value
// as written. It stops when fn returns false.
func eachMember(obj string, fn func(key, val string) bool) {
	for i := nextItem(obj, 1); i >= 0; {
		k := endString(obj, i)
		key := obj[i:k]
		i = skipSpace(obj, k) + 1 // the colon
		i = skipSpace(obj, i)
		end := endValue(obj, i)
		if !fn(key, obj[i:end]) {
			return
		}
		i = nextItem(obj, end)
	}
}

// eachElement calls fn with each element of the array arr (valid JSON,
// starting with '['), as written. It stops when fn returns false.
func eachElement(arr string, fn func(val string) bool) {
	for i := nextItem(arr, 1); i >= 0; {
		end := endValue(arr, i)
		if !fn(arr[i:end]) {
			return
		}
		i = nextItem(arr, end)
	}
}

// nextItem returns where the next member or element of an object or
// array starts, at or after i (past white space and a comma), or -1 where
// the object or array closes.
func nextItem(s string, i int) int {
	for {
		i = skipSpace(s, i)
		switch {
		case i >= len(s) || s[i] == '}' || s[i] == ']':
			return -1
		case s[i] == ',':
			i++
		default:
			return i
		}
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// endString returns the index after the string that starts at s[i]. It
// jumps from quote to quote (strings.IndexByte), which is fast on long
// text, and takes a quote as closing when an even number of backslashes
// precedes it (as guestjson's skipString does): an agent's history is
// mostly long strings, walked a byte at a time for a fifth of the host's
// decoding.
func endString(s string, i int) int {
	start := i + 1
	for i = start; ; i++ {
		j := strings.IndexByte(s[i:], '"')
		if j < 0 {
			return len(s)
		}
		i += j
		n := 0
		for k := i - 1; k >= start && s[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return i + 1
		}
	}
}

// endValue returns the index after the value that starts at s[i].
func endValue(s string, i int) int {
	switch s[i] {
	case '"':
		return endString(s, i)
	case '{', '[':
		depth := 0
		for ; i < len(s); i++ {
			switch s[i] {
			case '"':
				i = endString(s, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(s)
	}
	for ; i < len(s); i++ { // a number, true, false or null
		switch s[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}

// AppendEnds appends to dst, for each element of the array arr (valid
// JSON, starting with '['), the index in arr just past it, plus off.
func AppendEnds(dst []int, arr string, off int) []int {
	for i := nextItem(arr, 1); i >= 0; {
		end := endValue(arr, i)
		dst = append(dst, off+end)
		i = nextItem(arr, end)
	}
	return dst
}
