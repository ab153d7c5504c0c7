package compat

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/responses"
)

// Every field of the newest SDK's request is accounted for in docs/api.md's
// Responses section (honoured, passed on, refused, or accepted and
// ignored): a field the SDK gains, as moderation and prompt_cache_retention
// were, fails this until it is classified there, and the table stays the
// one place that says what happens to it.
func TestResponsesFieldsAccountedFor(t *testing.T) {
	doc, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	start := strings.Index(s, "\n## Responses\n")
	if start < 0 {
		t.Fatal("docs/api.md has no Responses section")
	}
	end := strings.Index(s[start+1:], "\n## ")
	section := s[start:]
	if end > 0 {
		section = s[start : start+1+end]
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z_]+)").FindAllStringSubmatch(section, -1) {
		named[m[1]] = true
	}
	typ := reflect.TypeFor[responses.ResponseNewParams]()
	for i := range typ.NumField() {
		name := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]
		if name != "" && name != "-" && !named[name] {
			t.Errorf("%s (openai-go ResponseNewParams.%s) is not in docs/api.md's Responses section: honour it, or refuse it by name, and say so there", name, typ.Field(i).Name)
		}
	}
}
