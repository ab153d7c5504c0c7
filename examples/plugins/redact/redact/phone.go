package redact

// Phone numbers are recognised by shape, not by a numbering plan: an
// optional "+", then groups of digits, a group possibly in parentheses,
// separated by one space, hyphen or dot ("+1 (555) 123-4567", "020 7946 0958",
// "555.123.4567"). Between 7 and 15 digits (E.164's maximum) in all. A bare run
// of digits is not a phone number unless it starts with "+": that would
// redact timestamps, ids and amounts. Shapes that are more often something
// else are refused too: see plausible.
const (
	minPhoneDigits = 7
	maxPhoneDigits = 15
)

// Separators before a group, as bits so that a number's can be combined.
const (
	sepSpace = 1 << iota
	sepHyphen
	sepDot
)

// group is one group of digits of a phone-shaped run.
type group struct {
	start, end int  // bounds in the text, parentheses included
	digits     int  // number of digits
	paren      bool // in parentheses
	sep        int  // the separator before it; 0 for none
}

// phoneSep returns the bit of a phone separator byte, or 0.
func phoneSep(b byte) int {
	switch b {
	case ' ':
		return sepSpace
	case '-':
		return sepHyphen
	case '.':
		return sepDot
	}
	return 0
}

// scanPhone reads the longest phone-shaped run starting at s[i], not going
// past limit, appending its groups to groups[:0]. It returns the groups and
// where the run ends: i+1 when not even one group follows, so that the caller
// moves on.
func scanPhone(s string, i, limit int, groups []group) ([]group, int) {
	groups = groups[:0]
	j := i
	if s[j] == '+' {
		j++
	}
	sep := 0
	for {
		g, ok := phoneGroup(s, j, limit)
		if !ok {
			break
		}
		g.sep = sep
		groups = append(groups, g)
		j = g.end
		sep = 0
		if j < limit {
			sep = phoneSep(s[j])
		}
		k := j
		if sep != 0 {
			k++
		}
		if k >= limit || !joins(sep, g.paren, s[k]) {
			break
		}
		j = k
	}
	if len(groups) == 0 {
		return groups, i + 1
	}
	return groups, groups[len(groups)-1].end
}

// joins reports whether a group (in parentheses or not) and the character
// after it, with separator sep between them (0: none), go on as one number.
// A separator joins only if a group really follows; a group in parentheses
// may also touch its neighbours: "(555)123", "1(555)".
func joins(sep int, afterParen bool, next byte) bool {
	switch {
	case sep != 0:
		return isDigit(next) || next == '('
	case afterParen:
		return isDigit(next)
	}
	return next == '('
}

// phoneGroup reads one group at s[j]: digits, or digits in parentheses.
func phoneGroup(s string, j, limit int) (group, bool) {
	g := group{start: j}
	k := j
	if k < limit && s[k] == '(' {
		g.paren = true
		k++
	}
	digitsStart := k
	for k < limit && isDigit(s[k]) {
		k++
	}
	g.digits = k - digitsStart
	if g.digits == 0 {
		return g, false
	}
	if g.paren {
		if k >= limit || s[k] != ')' {
			return g, false
		}
		k++
	}
	g.end = k
	return g, true
}

// plausible reports whether the groups, the first one preceded by "+" when
// plus is set, are worth redacting as a phone number.
func plausible(groups []group, plus bool) bool {
	digits, seps, parens := 0, 0, plus
	var lens [3]int
	for i, g := range groups {
		digits += g.digits
		seps |= g.sep
		parens = parens || g.paren
		if i < len(lens) {
			lens[i] = g.digits
		}
	}
	if digits < minPhoneDigits || digits > maxPhoneDigits {
		return false
	}
	switch {
	case parens:
		return true // "+" or "(": written as a phone number
	case len(groups) < 2:
		return false // a bare number
	case seps == sepDot:
		// 555.123.4567; other dotted runs are decimals and IP addresses.
		return len(groups) == 3 && lens == [3]int{3, 3, 4}
	case seps == sepSpace:
		return len(groups) >= 3 // "in 2023 1500 people" is no phone number
	case seps == sepHyphen && len(groups) == 3 && lens == [3]int{4, 2, 2}:
		return false // an ISO date, 2024-01-15
	}
	return true
}

// eachPhone calls fn with the bounds of each phone number in s[from:to].
func eachPhone(s string, from, to int, fn func(start, end int)) {
	var groups []group
	for i := from; i < to; {
		b := s[i]
		if !(isDigit(b) || b == '+' || b == '(') || wordBefore(s, i) {
			i++
			continue
		}
		var end int
		groups, end = scanPhone(s, i, to, groups)
		if !wordAt(s, end) {
			splitRun(groups, b == '+', i, fn)
		}
		i = end
	}
}

// splitRun finds the phone numbers in one run: the whole run when it is
// plausible, else, from left to right, the longest plausible spans that
// start and end at spaces, so that a list of numbers ("555-123-4567
// 555-765-4321") is redacted number by number. start is where the run
// begins, before any "+".
func splitRun(groups []group, plus bool, start int, fn func(start, end int)) {
	for a := 0; a < len(groups); a++ {
		if a > 0 && groups[a].sep != sepSpace {
			continue
		}
		// Longer spans would hold more than maxPhoneDigits digits.
		for b := min(len(groups), a+maxPhoneDigits); b > a; b-- {
			if b < len(groups) && groups[b].sep != sepSpace {
				continue
			}
			if !plausible(groups[a:b], plus && a == 0) {
				continue
			}
			from := groups[a].start
			if a == 0 {
				from = start
			}
			fn(from, groups[b-1].end)
			a = b - 1
			break
		}
	}
}
