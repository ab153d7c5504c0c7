package auth

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/filtertest"
)

func mustHash(t *testing.T, tok string) [32]byte {
	t.Helper()
	h, err := ParseHash(HashToken(tok))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func newAuth(t *testing.T, cfg Config) *Auth {
	t.Helper()
	cfg.Tokens = []Token{
		{Name: "app", Hash: mustHash(t, "tok-app")},
		{Name: "acme-app", Hash: mustHash(t, "tok-acme"), Tenant: "acme"},
		{Name: "ops", Hash: mustHash(t, "tok-admin"), Admin: true},
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestAuth(t *testing.T) {
	a := newAuth(t, Config{})
	for _, tc := range []struct {
		name    string
		headers []string
		status  int    // 0: passes
		code    string // error code
		tenant  string
		actor   string
		typ     string
	}{
		{name: "no header", status: 401, code: apierr.CodeInvalidAPIKey},
		{name: "wrong scheme", headers: []string{"Authorization", "Basic tok-app"}, status: 401, code: apierr.CodeInvalidAPIKey},
		{name: "unknown token", headers: []string{"Authorization", "Bearer nope"}, status: 401, code: apierr.CodeInvalidAPIKey},
		{name: "token only: attributed to the token", headers: []string{"Authorization", "Bearer tok-app"},
			tenant: "default", actor: "app", typ: "service"},
		{name: "actor and tenant headers", headers: []string{"Authorization", "bearer tok-app",
			HeaderActorID, "u-1", HeaderActorType, "user", HeaderActorName, "Ada Lovelace", HeaderTenantID, "t1"},
			tenant: "t1", actor: "u-1", typ: "user"},
		{name: "bound token takes its tenant", headers: []string{"Authorization", "Bearer tok-acme"}, tenant: "acme", actor: "acme-app", typ: "service"},
		{name: "bound token, same tenant header", headers: []string{"Authorization", "Bearer tok-acme", HeaderTenantID, "acme"}, tenant: "acme", actor: "acme-app", typ: "service"},
		{name: "bound token, other tenant", headers: []string{"Authorization", "Bearer tok-acme", HeaderTenantID, "globex"},
			status: 403, code: apierr.CodeTenantForbidden},
		{name: "actor id too long", headers: []string{"Authorization", "Bearer tok-app", HeaderActorID, strings.Repeat("a", 257)},
			status: 400, code: apierr.CodeInvalidHeader},
		{name: "actor name with control char", headers: []string{"Authorization", "Bearer tok-app", HeaderActorID, "u", HeaderActorName, "a\x01b"},
			status: 400, code: apierr.CodeInvalidHeader},
		{name: "tenant with a space", headers: []string{"Authorization", "Bearer tok-app", HeaderTenantID, "a b"},
			status: 400, code: apierr.CodeInvalidHeader},
		{name: "actor name without id", headers: []string{"Authorization", "Bearer tok-app", HeaderActorName, "Ada"},
			status: 400, code: apierr.CodeInvalidHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, _ := filtertest.Exchange(filters.ChatCompletions, "{}", tc.headers...)
			next := &filtertest.Next{}
			err := a.Handle(context.Background(), x, next)
			if tc.status != 0 {
				var e *apierr.Error
				if !errors.As(err, &e) || e.Status != tc.status || e.Code != tc.code {
					t.Fatalf("want %d %s, got %v", tc.status, tc.code, err)
				}
				if next.Called {
					t.Fatal("next was called after a refusal")
				}
				return
			}
			if err != nil || !next.Called {
				t.Fatalf("want pass, got %v (next called %v)", err, next.Called)
			}
			id := x.Identity
			if id.TenantID != tc.tenant || id.Actor.ID != tc.actor || id.Actor.Type != tc.typ {
				t.Fatalf("identity %+v, want tenant %s actor %s/%s", id, tc.tenant, tc.actor, tc.typ)
			}
		})
	}
}

func TestAdminFlag(t *testing.T) {
	a := newAuth(t, Config{})
	x, _ := filtertest.Exchange(filters.Native, "", "Authorization", "Bearer tok-admin")
	if err := a.Handle(context.Background(), x, &filtertest.Next{}); err != nil || !x.Identity.Admin {
		t.Fatalf("admin token: err %v, identity %+v", err, x.Identity)
	}
}

func TestActorRequired(t *testing.T) {
	a := newAuth(t, Config{ActorPolicy: ActorRequired})
	x, _ := filtertest.Exchange(filters.ChatCompletions, "{}", "Authorization", "Bearer tok-app")
	var e *apierr.Error
	if err := a.Handle(context.Background(), x, &filtertest.Next{}); !errors.As(err, &e) || e.Param != HeaderActorID {
		t.Fatalf("want invalid_header naming %s, got %v", HeaderActorID, err)
	}
}

func TestRateLimit(t *testing.T) {
	a := newAuth(t, Config{RatePerSecond: 0.01, Burst: 2})
	var last error
	for i := 0; i < 3; i++ {
		x, _ := filtertest.Exchange(filters.ChatCompletions, "{}", "Authorization", "Bearer tok-app", HeaderTenantID, "t")
		last = a.Handle(context.Background(), x, &filtertest.Next{})
		if i < 2 && last != nil {
			t.Fatalf("request %d within the burst refused: %v", i, last)
		}
	}
	var e *apierr.Error
	if !errors.As(last, &e) || e.Status != http.StatusTooManyRequests || e.RetryAfter < 1 {
		t.Fatalf("want 429 with Retry-After, got %v", last)
	}
	// Naming another tenant does not escape the token's limit.
	x, _ := filtertest.Exchange(filters.ChatCompletions, "{}", "Authorization", "Bearer tok-app", HeaderTenantID, "other")
	if err := a.Handle(context.Background(), x, &filtertest.Next{}); !errors.As(err, &e) || e.Status != http.StatusTooManyRequests {
		t.Fatalf("another tenant name escaped the token's limit: %v", err)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Fatal("no tokens accepted")
	}
	if _, err := New(Config{Tokens: []Token{{Name: "a"}}, ActorPolicy: "maybe"}); err == nil {
		t.Fatal("unknown policy accepted")
	}
	if _, err := ParseHash("sha256:zz"); err == nil {
		t.Fatal("bad hash accepted")
	}
}

// TestLimitsBounded: tenant names come from clients; their buckets stay
// within the bound however many are named.
func TestLimitsBounded(t *testing.T) {
	l := NewLimits(100)
	// The token's own limit never binds here, however slowly the loop runs
	// (-race): a refusal must come from the tenant's bucket alone.
	l.Configure(Rate{PerSecond: 1e9, Burst: 1e9}, Rate{PerSecond: 0.001, Burst: 1})
	for i := 0; i < 5000; i++ {
		l.Allow("tok", "tenant-"+strconv.Itoa(i))
		if n := l.TenantBuckets(); n > 100 {
			t.Fatalf("%d tenant buckets after %d tenants", n, i+1)
		}
	}
	// A tenant just limited is still limited: the least recently used
	// buckets go first.
	if _, ok := l.Allow("tok", "tenant-4999"); ok {
		t.Fatal("the most recent tenant's bucket was dropped")
	}
}
