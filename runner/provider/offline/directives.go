package offline

import (
	"fmt"
	"strings"

	"github.com/runedge/runedge/runner"
)

// directive is a command at the start of the last user message that makes
// the provider misbehave on purpose, so clients and demos can see every
// outcome without a real model.
type directive int

const (
	directiveNone        directive = iota
	directiveFail                  // /fail: fail before the first token
	directiveFailMid               // /fail-mid: three tokens, then fail
	directiveWait                  // /wait: pause for approval
	directiveInvalid               // /invalid: with a schema, answer a document that violates it, repair included
	directiveInvalidOnce           // /invalid-once: violate it on the first attempt only, so the repair succeeds
)

var directives = map[string]directive{
	"/fail":         directiveFail,
	"/fail-mid":     directiveFailMid,
	"/wait":         directiveWait,
	"/invalid":      directiveInvalid,
	"/invalid-once": directiveInvalidOnce,
}

var (
	errSimulated = fmt.Errorf("%w: offline provider: simulated failure", runner.ErrProvider)
	errApproval  = fmt.Errorf("%w: offline provider: approval required", runner.ErrWaiting)
)

// directiveOf reads the directive from the first word of text; only an exact
// word counts, so "/failure is not an option" is ordinary text.
func directiveOf(text string) directive {
	first, _, _ := strings.Cut(text, " ")
	return directives[first]
}

// violates reports whether the answer to attempt must break the schema.
func (d directive) violates(attempt int) bool {
	return d == directiveInvalid || (d == directiveInvalidOnce && attempt <= 1)
}
