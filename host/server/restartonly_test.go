package server

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/config/configtest"
	"github.com/runedge/runedge/internal/logbuf"
)

// A reload that changes a restart-only setting, any of them (the walk of
// config.RestartOnly), warns naming it and keeps the running value, while
// the rest of the reload applies.
func TestReloadOfRestartOnlySettingsWarnsAndKeeps(t *testing.T) {
	cfg := configtest.New(t)
	cfg.Tokens = []config.Token{{Name: "app", Hash: auth.HashToken(tokApp)}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	logs := &logbuf.Buffer{}
	h := serveConfigLog(t, cfg, logs)
	for _, s := range config.RestartOnly {
		t.Run(s.Name, func(t *testing.T) {
			cur := h.srv.gen.Load().cfg
			running := reflect.ValueOf(s.Field(cur)).Elem().Interface()
			next := *cur
			if !perturb(reflect.ValueOf(s.Field(&next)).Elem()) {
				t.Fatalf("no value of %s to change", s.Name)
			}
			next.Limits.RatePerSecond = cur.Limits.RatePerSecond + 1 // reloadable: applies
			before := len(logs.String())
			if err := h.srv.Reload(context.Background(), &next); err != nil {
				t.Fatal(err)
			}
			got := h.srv.gen.Load().cfg
			if now := reflect.ValueOf(s.Field(got)).Elem().Interface(); !reflect.DeepEqual(now, running) {
				t.Errorf("%s changed on reload: %v, was %v", s.Name, now, running)
			}
			if got.Limits.RatePerSecond != next.Limits.RatePerSecond {
				t.Errorf("the reloadable limits.rate_per_second was not applied")
			}
			var warned []string
			for _, line := range strings.Split(logs.String()[before:], "\n") {
				if strings.Contains(line, "needs a restart") {
					warned = append(warned, line)
				}
			}
			if len(warned) != 1 || !strings.Contains(warned[0], "field="+s.Name) {
				t.Errorf("warnings %q, want one naming %s", warned, s.Name)
			}
		})
	}
}

// perturb changes one value inside v (the first it can), reporting
// whether it did.
func perturb(v reflect.Value) bool {
	if d, ok := v.Interface().(config.Duration); ok {
		v.Set(reflect.ValueOf(config.Dur(d.Std() + time.Second)))
		return true
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "-changed")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() + 1)
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return perturb(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && perturb(v.Field(i)) {
				return true
			}
		}
		return false
	default:
		return false
	}
	return true
}
