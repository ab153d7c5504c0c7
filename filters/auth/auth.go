// Package auth is the first stage of every chain: it checks the bearer token
// and establishes who is calling (actor) and for whom (tenant).
package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// Headers read by the stage.
const (
	HeaderActorID   = "X-Service-Actor-Id"
	HeaderActorType = "X-Service-Actor-Type"
	HeaderActorName = "X-Service-Actor-Name"
	HeaderTenantID  = "X-Service-Tenant-Id"
)

// Limits on attribution headers.
const (
	maxActorLen  = 256
	maxTenantLen = 128
)

// Auth is the auth stage.
type Auth struct {
	cfg    Config
	limits *Limits
}

var _ filters.Stage = (*Auth)(nil)

// Name implements filters.Stage.
func (a *Auth) Name() string { return contract.StageAuth }

// Handle implements filters.Stage.
func (a *Auth) Handle(ctx context.Context, x *filters.Exchange, next filters.Handler) error {
	tok, err := a.token(x.Request.Header)
	if err != nil {
		return err
	}
	id, err := a.identity(tok, x.Request.Header)
	if err != nil {
		return err
	}
	if a.limits != nil {
		if wait, ok := a.limits.Allow(tok.Name, id.TenantID); !ok {
			e := apierr.New(apierr.CodeRateLimited, "rate limit exceeded for this token or tenant; retry after the Retry-After delay")
			e.RetryAfter = wait
			return e
		}
		if wait, ok := a.limits.AllowFleet(ctx, id.TenantID); !ok {
			e := apierr.New(apierr.CodeRateLimited, "rate limit exceeded for this tenant across the fleet; retry after the Retry-After delay")
			e.RetryAfter = wait
			return e
		}
	}
	x.Identity = id
	return next.Handle(ctx, x)
}

var errInvalidKey = apierr.New(apierr.CodeInvalidAPIKey, "missing or invalid bearer token")

// token finds the configured token matching the Authorization header. Every
// configured hash is compared, in constant time, so the timing says nothing
// about which token came close.
func (a *Auth) token(h http.Header) (*Token, error) {
	// Two Authorization headers are refused, not read first-wins: a proxy
	// in front may have checked the other one. Read as net/http filed it,
	// under its canonical name (filters.HeaderValue).
	vs := h["Authorization"]
	if len(vs) != 1 {
		return nil, errInvalidKey
	}
	v := vs[0]
	scheme, secret, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || secret == "" {
		return nil, errInvalidKey
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(secret)))
	var found *Token
	for i := range a.cfg.Tokens {
		if subtle.ConstantTimeCompare(sum[:], a.cfg.Tokens[i].Hash[:]) == 1 {
			found = &a.cfg.Tokens[i]
		}
	}
	if found == nil {
		return nil, errInvalidKey
	}
	return found, nil
}

// identity derives actor and tenant from the headers and the token.
func (a *Auth) identity(tok *Token, h http.Header) (filters.Identity, error) {
	id := filters.Identity{Token: tok.Name, Admin: tok.Admin}
	tenant, err := filters.HeaderValue(h, HeaderTenantID, maxTenantLen, filters.IDChar)
	if err != nil {
		return id, err
	}
	switch {
	case tok.Tenant != "" && tenant != "" && tenant != tok.Tenant:
		return id, apierr.Param(apierr.CodeTenantForbidden, HeaderTenantID, "this token is bound to another tenant")
	case tok.Tenant != "":
		id.TenantID = tok.Tenant
	case tenant != "":
		id.TenantID = tenant
	default:
		id.TenantID = a.cfg.DefaultTenant
	}

	var actor runner.Actor
	for _, f := range []struct {
		dst  *string
		name string
	}{{&actor.ID, HeaderActorID}, {&actor.Type, HeaderActorType}, {&actor.Name, HeaderActorName}} {
		if *f.dst, err = filters.HeaderValue(h, f.name, maxActorLen, filters.Printable); err != nil {
			return id, err
		}
	}
	if actor.ID == "" {
		if actor.Type != "" || actor.Name != "" || a.cfg.ActorPolicy == ActorRequired {
			return id, apierr.InvalidHeader(HeaderActorID, "header %s is required", HeaderActorID)
		}
		actor = runner.Actor{ID: tok.Name, Type: "service", Name: tok.Name}
	}
	if actor.Type == "" {
		actor.Type = "user"
	}
	id.Actor = actor
	return id, nil
}
