package redact

import (
	"strings"
	"unicode/utf8"
)

// Limits from RFC 5321, which also bound how far the scanner looks around an
// "@": the local part is at most 64 bytes, a domain at most 253, a label 63.
const (
	maxLocal       = 64
	maxDomain      = 253
	maxDomainLabel = 63
)

// nextEmail finds the first e-mail address in s at or after from and returns
// its bounds, or ok false when there is none. The local part does not reach
// back before from, so that addresses found one after the other never
// overlap.
func nextEmail(s string, from int) (start, end int, ok bool) {
	for i := from; i < len(s); i++ {
		at := strings.IndexByte(s[i:], '@')
		if at < 0 {
			return 0, 0, false
		}
		i += at
		if start, end, ok = emailAt(s, i, from); ok {
			return start, end, true
		}
	}
	return 0, 0, false
}

// emailAt reads the address around the "@" at s[at]: the local part is the
// run of address characters before it (from floor on), the domain the run
// after it, less a sentence's closing dot. Both must look like what a mail
// system accepts; anything else, "@handle" or "a@b", is left alone.
func emailAt(s string, at, floor int) (start, end int, ok bool) {
	start = localStart(s, at, floor)
	for start < at && s[start] == '.' {
		start++
	}
	if start == at || at-start > maxLocal {
		return 0, 0, false
	}
	end = domainEnd(s, at+1)
	if !validDomain(s[at+1 : end]) {
		return 0, 0, false
	}
	return start, end, true
}

// localStart walks back from the "@" at s[at] over local-part characters,
// giving up a little past the longest valid local part so that a long run
// of letters costs no more than a short one.
func localStart(s string, at, floor int) int {
	i := at
	for i > floor && at-i <= maxLocal {
		if b := s[i-1]; b < utf8.RuneSelf {
			if !isLocalByte(b) {
				break
			}
			i--
			continue
		}
		r, size := utf8.DecodeLastRuneInString(s[floor:i])
		if !isLetterRune(r) {
			break
		}
		i -= size
	}
	return i
}

// domainEnd returns the end of the domain that starts at s[i]. Dots and
// hyphens at its end belong to the sentence ("write to jane@example.com.").
func domainEnd(s string, i int) int {
	start := i
	for i < len(s) && i-start <= maxDomain {
		if b := s[i]; b < utf8.RuneSelf {
			if !isDomainByte(b) {
				break
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isLetterRune(r) {
			break
		}
		i += size
	}
	for i > start && (s[i-1] == '.' || s[i-1] == '-') {
		i--
	}
	return i
}

// validDomain reports whether d has at least two non-empty labels of
// letters, digits and inner hyphens, the last one starting with a letter:
// that rules out version numbers and IP addresses ("a@1.2"), which are
// rarely addresses and often code.
func validDomain(d string) bool {
	if len(d) > maxDomain {
		return false
	}
	labels := strings.Split(d, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > maxDomainLabel || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
	}
	tld := labels[len(labels)-1]
	if len(tld) < 2 {
		return false
	}
	if tld[0] < utf8.RuneSelf {
		return !isDigit(tld[0])
	}
	r, _ := utf8.DecodeRuneInString(tld)
	return isLetterRune(r)
}
