package auth_test

import (
	"strings"
	"testing"

	"github.com/runedge/runedge/filters/auth"
)

func TestActorsDefaults(t *testing.T) {
	var a auth.Actors
	a.Defaults()
	if a.Missing != string(auth.ActorFromToken) || a.DefaultTenant != auth.DefaultTenant {
		t.Fatalf("defaults: %+v", a)
	}
	a = auth.Actors{Missing: "require", DefaultTenant: "acme"}
	a.Defaults()
	if a.Missing != "require" || a.DefaultTenant != "acme" {
		t.Fatalf("set values overwritten: %+v", a)
	}
}

func TestActorsValidateNamesTheField(t *testing.T) {
	a := auth.Actors{Missing: "maybe", DefaultTenant: "not a tenant"}
	err := a.Validate("actors")
	for _, want := range []string{`actors.missing: want token or require, got "maybe"`, `actors.default_tenant: "not a tenant" is not a tenant id`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
	a = auth.Actors{}
	a.Defaults()
	if err := a.Validate("actors"); err != nil {
		t.Errorf("defaults refused: %v", err)
	}
}

func TestRateConfig(t *testing.T) {
	r := auth.RateConfig{RatePerSecond: -1, Burst: -1, TenantRatePerSecond: -1, TenantBurst: -1}
	err := r.Validate("limits")
	for _, f := range []string{"rate_per_second", "burst", "tenant_rate_per_second", "tenant_burst"} {
		if err == nil || !strings.Contains(err.Error(), "limits."+f+": must not be negative") {
			t.Errorf("got %v, want an error naming limits.%s", err, f)
		}
	}
	tok, ten := auth.RateConfig{RatePerSecond: 5, Burst: 10}.Rates()
	if tok != (auth.Rate{PerSecond: 5, Burst: 10}) || ten != tok {
		t.Errorf("without tenant figures: %+v %+v", tok, ten)
	}
	_, ten = auth.RateConfig{RatePerSecond: 5, Burst: 10, TenantRatePerSecond: 50, TenantBurst: 100}.Rates()
	if ten != (auth.Rate{PerSecond: 50, Burst: 100}) {
		t.Errorf("tenant figures: %+v", ten)
	}
}

func TestValidTenant(t *testing.T) {
	for s, want := range map[string]bool{
		"acme": true, "a.b_c:d-1": true, strings.Repeat("x", 128): true,
		"": false, strings.Repeat("x", 129): false, "a b": false, "é": false, "a/b": false,
	} {
		if auth.ValidTenant(s) != want {
			t.Errorf("ValidTenant(%q) = %v", s, !want)
		}
	}
}
