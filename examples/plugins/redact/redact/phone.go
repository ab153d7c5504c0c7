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

// Separators seen in a phone run, as bits of phoneRun.seps.
const (
	sepSpace = 1 << iota
	sepHyphen
	sepDot
)

// phoneRun describes a run of text shaped like a phone number.
type phoneRun struct {
	end          int  // index just past the run
	plus, parens bool // starts with "+"; has a group in parentheses
	digits       int
	groups       int
	seps         int
	lens         [3]int // digits in each of the first three groups
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
// past limit. It reports false when not even one group of digits follows;
// run.end is then i+1 so that the caller moves on.
func scanPhone(s string, i, limit int) (phoneRun, bool) {
	run := phoneRun{end: i + 1}
	j := i
	if s[j] == '+' {
		run.plus = true
		j++
	}
	for {
		n, next, paren := phoneGroup(s, j, limit)
		if n == 0 {
			break
		}
		if run.groups < len(run.lens) {
			run.lens[run.groups] = n
		}
		run.groups++
		run.digits += n
		run.parens = run.parens || paren
		run.end, j = next, next
		// A separator joins the next group only if one really follows;
		// a group in parentheses may also touch its neighbours: "(555)123".
		sep := 0
		if j < limit {
			sep = phoneSep(s[j])
		}
		k := j
		if sep != 0 {
			k++
		}
		if k >= limit || !(isDigit(s[k]) || s[k] == '(') || sep == 0 && !paren && s[k] != '(' {
			break
		}
		run.seps |= sep
		j = k
	}
	return run, run.groups > 0
}

// phoneGroup reads one group at s[j]: digits, or digits in parentheses. It
// returns the number of digits (0 when there is no group), where the group
// ends and whether it was in parentheses.
func phoneGroup(s string, j, limit int) (digits, end int, paren bool) {
	k := j
	if k < limit && s[k] == '(' {
		paren = true
		k++
	}
	start := k
	for k < limit && isDigit(s[k]) {
		k++
	}
	digits = k - start
	if digits == 0 {
		return 0, j, false
	}
	if paren {
		if k >= limit || s[k] != ')' {
			return 0, j, false
		}
		k++
	}
	return digits, k, paren
}

// plausible reports whether a phone-shaped run is worth redacting, given the
// text after it.
func (r *phoneRun) plausible(s string) bool {
	if r.digits < minPhoneDigits || r.digits > maxPhoneDigits || wordAt(s, r.end) {
		return false
	}
	if r.plus || r.parens {
		return true
	}
	switch {
	case r.groups < 2:
		return false // a bare number
	case r.seps == sepDot:
		// 555.123.4567; other dotted runs are decimals and IP addresses.
		return r.groups == 3 && r.lens == [3]int{3, 3, 4}
	case r.seps == sepSpace:
		return r.groups >= 3 // "in 2023 1500 people" is no phone number
	case r.seps == sepHyphen && r.groups == 3 && r.lens == [3]int{4, 2, 2}:
		return false // an ISO date, 2024-01-15
	}
	return true
}

// eachPhone calls fn with the bounds of each phone number in s[from:to].
func eachPhone(s string, from, to int, fn func(start, end int)) {
	for i := from; i < to; {
		b := s[i]
		if !(isDigit(b) || b == '+' || b == '(') || wordBefore(s, i) {
			i++
			continue
		}
		run, ok := scanPhone(s, i, to)
		if ok && run.plausible(s) {
			fn(i, run.end)
		}
		i = run.end
	}
}
