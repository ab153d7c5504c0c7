package config

import (
	"strings"
	"testing"
)

// Each bad budget or price is reported under its own field.
func TestUsageValidation(t *testing.T) {
	c := Default()
	c.Tokens = []Token{{Name: "app", Hash: "sha256:" + strings.Repeat("a", 64)}}
	c.Usage = Usage{
		Prices: []Price{{Provider: "bedrock", Input: -1}},
		Budgets: []Budget{
			{Tenant: "acme", Window: "week", Tokens: 10},
			{Tenant: "acme", Window: "day"},
			{Tenant: "acme", Token: "nobody", Window: "30s", Tokens: 1},
			{Name: "x", Tenant: "a", Window: "day", Tokens: 1}, {Name: "x", Tenant: "b", Window: "month", Cost: 2},
		},
	}
	err := c.Validate()
	for _, want := range []string{"usage.prices[0].provider", "usage.prices[0].input_per_million", "usage.budgets[0].window",
		"usage.budgets[1]: sets neither", "usage.budgets[2].token", "usage.budgets[2].window", "usage.budgets[4].name"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %s in: %v", want, err)
		}
	}
	c.Usage = Usage{Budgets: []Budget{{Tenant: "acme", Window: "6h", Tokens: 10}, {Tenant: "acme", Token: "app", Window: "month", Cost: 1.5}}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	rules := c.BudgetRules()
	if len(rules) != 2 || rules[0].Every.Hours() != 6 || rules[0].Window != "" || rules[1].CostNanos != 1_500_000_000 || rules[1].Name != "acme/token:app/month" {
		t.Fatalf("rules: %+v", rules)
	}
}
