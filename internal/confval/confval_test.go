package confval

import (
	"strings"
	"testing"
	"time"
)

func TestProblemsNameTheField(t *testing.T) {
	var d Duration
	if err := d.UnmarshalText([]byte("soon")); err != nil {
		t.Fatal(err)
	}
	p := At("limits")
	p.Duration("read_body_timeout", d)
	p.Duration("ok", Dur(time.Second))
	p.Duration("negative", Dur(-time.Second))
	p.Add("max_body_bytes", "must be positive")
	got := p.Err().Error()
	for _, want := range []string{
		`limits.read_body_timeout: "soon" is not a duration`,
		"limits.negative: must not be negative",
		"limits.max_body_bytes: must be positive",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q lack %q", got, want)
		}
	}
	if strings.Contains(got, "limits.ok") {
		t.Errorf("a good duration was reported: %q", got)
	}
	if At("").Field("listen") != "listen" {
		t.Error("a top-level field got a prefix")
	}
	if At("tools").Err() != nil {
		t.Error("no problems is not nil")
	}
}

func TestEnvName(t *testing.T) {
	for s, want := range map[string]bool{"OPENAI_API_KEY": true, "_X1": true, "": false, "1X": false, "sk-abc": false} {
		if EnvName(s) != want {
			t.Errorf("EnvName(%q) = %v", s, !want)
		}
	}
}
