package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/runedge/runedge/filters/builtin"
)

// TestStagePartsSitWhereTheySay checks the list of stage-owned parts: each
// names a stage of the chain, and every field of its part is found in the
// file under the path the list gives (the path its errors name), so a part
// moved in Config without its line here fails.
func TestStagePartsSitWhereTheySay(t *testing.T) {
	c := &Config{}
	fields := map[string]string{}
	configFields(reflect.TypeFor[Config](), "", fields)
	stages := slices.Concat(builtin.Order, builtin.CompactOrder, builtin.NativeRunOrder)
	for _, p := range c.StageParts() {
		if !slices.Contains(stages, p.Stage) {
			t.Errorf("%s: not a stage of filters/builtin", p.Stage)
		}
		own := map[string]string{}
		configFields(reflect.TypeOf(p.Part).Elem(), p.Path+".", own)
		if len(own) == 0 {
			t.Errorf("%s at %s: a part without fields", p.Stage, p.Path)
		}
		for name := range own {
			if _, ok := fields[name]; !ok {
				t.Errorf("%s: its field %s is not in the file at that path", p.Stage, name)
			}
		}
	}
}

// TestStagePartsListed checks that every section type a stage defines and
// Config holds is in StageParts, so its defaults and checks run, and that
// the list follows the chain's order.
func TestStagePartsListed(t *testing.T) {
	c := &Config{}
	listed := map[reflect.Type]bool{}
	last := -1
	for _, p := range c.StageParts() {
		listed[reflect.TypeOf(p.Part).Elem()] = true
		i := slices.Index(builtin.Order, p.Stage)
		if i < last {
			t.Errorf("%s at %s: out of filters/builtin.Order", p.Stage, p.Path)
		}
		last = i
	}
	for _, typ := range stageTypes(reflect.TypeFor[Config]()) {
		if !listed[typ] {
			t.Errorf("%s: a stage's section in Config, not in StageParts", typ)
		}
	}
}

// stageTypes are the struct types of filters/… packages found in t.
func stageTypes(t reflect.Type) []reflect.Type {
	var out []reflect.Type
	for i := range t.NumField() {
		ft := t.Field(i).Type
		if ft.Kind() != reflect.Struct {
			continue
		}
		if strings.HasPrefix(ft.PkgPath(), "github.com/runedge/runedge/filters/") {
			out = append(out, ft)
			continue
		}
		out = append(out, stageTypes(ft)...)
	}
	return out
}

// TestStagePartsNameTheirFields loads a file with one bad value of each
// stage-owned field and checks that the error names it in full.
func TestStagePartsNameTheirFields(t *testing.T) {
	for doc, field := range map[string]string{
		"limits: {max_body_bytes: -1}":                   "limits.max_body_bytes: must be positive",
		"limits: {read_body_timeout: later}":             `limits.read_body_timeout: "later" is not a duration`,
		"actors: {missing: sometimes}":                   `actors.missing: want token or require, got "sometimes"`,
		"actors: {default_tenant: 'a b'}":                `actors.default_tenant: "a b" is not a tenant id`,
		"limits: {rate_per_second: -1}":                  "limits.rate_per_second: must not be negative",
		"limits: {tenant_burst: -1}":                     "limits.tenant_burst: must not be negative",
		"tools: {hosted: drop}":                          `tools.hosted: want withhold or refuse, got "drop"`,
		"limits: {sse_keepalive: 1ms}":                   "limits.sse_keepalive: 1ms is too short",
		"plugins: {stream_window: -1s}":                  "plugins.stream_window: must not be negative",
		"compaction: {keys: [{id: a.b, secret_env: X}]}": "compaction.keys[0].id: want a non-empty id without '.'",
	} {
		_, err := Parse([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: got %v, want an error %q", doc, err, field)
		}
	}
}
