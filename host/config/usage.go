package config

import (
	"fmt"
	"math"
	"time"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/budget"
)

// Usage is the usage section: what tokens cost, and the budgets runs are
// held to (docs/configuration.md "usage"). Live: a reload applies it to
// the next request.
type Usage struct {
	Prices  []Price  `yaml:"prices"`
	Budgets []Budget `yaml:"budgets"`
	// DefaultMaxOutputTokens is the output a request without
	// max_output_tokens (max_tokens, max_completion_tokens) is reserved
	// for at admission, on top of its counted input.
	DefaultMaxOutputTokens int `yaml:"default_max_output_tokens"`
}

// DefaultMaxOutputTokens is usage.default_max_output_tokens's default.
const DefaultMaxOutputTokens = 4096

// Price is what one provider's (or one of its models') tokens cost, per
// million, in one currency unit for all prices.
type Price struct {
	// Provider is provider.kind (offline, openai); Model the upstream
	// model ("": every model of the provider).
	Provider    string  `yaml:"provider"`
	Model       string  `yaml:"model"`
	Input       float64 `yaml:"input_per_million"`
	CachedInput float64 `yaml:"cached_input_per_million"`
	Output      float64 `yaml:"output_per_million"`
}

// Budget is one budget of a tenant.
type Budget struct {
	// Name names it in refusals ("" : made from the rest).
	Name   string `yaml:"name"`
	Tenant string `yaml:"tenant"`
	// Token (a token's name) or Actor narrow it to one token's or actor's
	// runs of the tenant.
	Token string `yaml:"token"`
	Actor string `yaml:"actor"`
	// Tokens (input + output) and Cost (in the prices' unit) per window; at
	// least one.
	Tokens int64   `yaml:"tokens"`
	Cost   float64 `yaml:"cost"`
	// Window is day or month (calendar, UTC) or a duration (rolling, e.g.
	// 6h).
	Window string `yaml:"window"`
}

func (u *Usage) applyDefaults() {
	if u.DefaultMaxOutputTokens == 0 {
		u.DefaultMaxOutputTokens = DefaultMaxOutputTokens
	}
}

// rollingWindow parses a rolling window: a duration of at least a minute.
func rollingWindow(w string) (time.Duration, bool) {
	d, err := time.ParseDuration(w)
	return d, err == nil && d >= time.Minute
}

func (c *Config) validateUsage(bad func(field, format string, args ...any)) {
	u := &c.Usage
	if u.DefaultMaxOutputTokens < 0 {
		bad("usage.default_max_output_tokens", "must not be negative")
	}
	for i, p := range u.Prices {
		f := fmt.Sprintf("usage.prices[%d]", i)
		if p.Provider != ProviderOffline && p.Provider != ProviderOpenAI {
			bad(f+".provider", "want %s or %s, got %q", ProviderOffline, ProviderOpenAI, p.Provider)
		}
		for _, v := range []struct {
			name string
			v    float64
		}{{"input_per_million", p.Input}, {"cached_input_per_million", p.CachedInput}, {"output_per_million", p.Output}} {
			if v.v < 0 || math.IsNaN(v.v) || math.IsInf(v.v, 0) {
				bad(f+"."+v.name, "must be a price, not negative")
			}
		}
	}
	names := map[string]bool{}
	tokens := map[string]bool{}
	for _, t := range c.Tokens {
		tokens[t.Name] = true
	}
	for i, b := range u.Budgets {
		f := fmt.Sprintf("usage.budgets[%d]", i)
		if !auth.ValidTenant(b.Tenant) {
			bad(f+".tenant", "%q is not a tenant id", b.Tenant)
		}
		if b.Token != "" && !tokens[b.Token] {
			bad(f+".token", "names no token of the tokens section: %q", b.Token)
		}
		if b.Tokens < 0 || b.Cost < 0 || math.IsNaN(b.Cost) || math.IsInf(b.Cost, 0) {
			bad(f, "tokens and cost must not be negative")
		} else if b.Tokens == 0 && b.Cost == 0 {
			bad(f, "sets neither tokens nor cost")
		}
		if _, ok := rollingWindow(b.Window); !ok && b.Window != budget.Day && b.Window != budget.Month {
			bad(f+".window", "want day, month or a duration of at least 1m (rolling), got %q", b.Window)
		}
		n := budgetName(b)
		if names[n] {
			bad(f+".name", "%q names two budgets", n)
		}
		names[n] = true
	}
}

// budgetName is b's name, or one made from what it counts.
func budgetName(b Budget) string {
	if b.Name != "" {
		return b.Name
	}
	n := b.Tenant
	if b.Token != "" {
		n += "/token:" + b.Token
	}
	if b.Actor != "" {
		n += "/actor:" + b.Actor
	}
	return n + "/" + b.Window
}

// BudgetRules are the usage section's budgets as runner/budget takes them.
func (c *Config) BudgetRules() []budget.Rule {
	out := make([]budget.Rule, 0, len(c.Usage.Budgets))
	for _, b := range c.Usage.Budgets {
		r := budget.Rule{Name: budgetName(b), Tenant: b.Tenant, Token: b.Token, Actor: b.Actor,
			Tokens: b.Tokens, CostNanos: int64(math.Round(b.Cost * 1e9))}
		if d, ok := rollingWindow(b.Window); ok {
			r.Every = d
		} else {
			r.Window = b.Window
		}
		out = append(out, r)
	}
	return out
}

// ModelLabel is what the ledger records as a run's model: the provider
// kind, and the upstream model when there is one.
func (c *Config) ModelLabel() string {
	if c.Provider.Kind == ProviderOpenAI {
		return c.Provider.Kind + "/" + c.Provider.OpenAI.Model
	}
	return c.Provider.Kind
}

// RunPrice is the price of the configured provider's model: the entry
// naming the model, else the provider's entry without a model, else none.
func (c *Config) RunPrice() runner.Price {
	model := ""
	if c.Provider.Kind == ProviderOpenAI {
		model = c.Provider.OpenAI.Model
	}
	var p runner.Price
	for _, e := range c.Usage.Prices {
		if e.Provider != c.Provider.Kind {
			continue
		}
		switch e.Model {
		case model:
			return runner.Price{Input: e.Input, CachedInput: e.CachedInput, Output: e.Output}
		case "":
			p = runner.Price{Input: e.Input, CachedInput: e.CachedInput, Output: e.Output}
		}
	}
	return p
}
