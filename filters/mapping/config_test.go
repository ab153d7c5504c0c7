package mapping_test

import (
	"strings"
	"testing"

	"github.com/runedge/runedge/filters/mapping"
)

func TestConfigDefaults(t *testing.T) {
	var c mapping.Config
	c.Defaults()
	if c.Hosted != mapping.HostedWithhold {
		t.Fatalf("default: %q", c.Hosted)
	}
	c = mapping.Config{Hosted: mapping.HostedRefuse}
	c.Defaults()
	if c.Hosted != mapping.HostedRefuse {
		t.Fatalf("set value overwritten: %q", c.Hosted)
	}
}

func TestConfigValidateNamesTheField(t *testing.T) {
	c := mapping.Config{Hosted: "drop"}
	err := c.Validate("tools")
	if want := `tools.hosted: want withhold or refuse, got "drop"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
	for _, v := range []string{mapping.HostedWithhold, mapping.HostedRefuse} {
		if err := (&mapping.Config{Hosted: v}).Validate("tools"); err != nil {
			t.Errorf("%s refused: %v", v, err)
		}
	}
}

func TestConfigPolicy(t *testing.T) {
	counted := 0
	p := mapping.Config{Hosted: mapping.HostedWithhold}.Policy(func(string) { counted++ })
	if p.Refuse || p.Count == nil {
		t.Fatalf("withhold: %+v", p)
	}
	if !(mapping.Config{Hosted: mapping.HostedRefuse}).Policy(nil).Refuse {
		t.Fatal("refuse does not refuse")
	}
}
