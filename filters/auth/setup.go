package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Token is one configured bearer token. Only its SHA-256 is kept.
type Token struct {
	Name   string
	Hash   [sha256.Size]byte
	Tenant string // "" = unbound: the caller names the tenant
	Admin  bool
}

// ActorPolicy says what to do when a request carries no actor headers.
type ActorPolicy string

const (
	// ActorFromToken attributes the request to the token's own identity
	// (actor id = token name, type "service"). The default.
	ActorFromToken ActorPolicy = "token"
	// ActorRequired refuses requests without x-service-actor-id.
	ActorRequired ActorPolicy = "require"
)

// Config configures the stage.
type Config struct {
	Tokens      []Token
	ActorPolicy ActorPolicy
	// DefaultTenant is used by unbound tokens when no tenant header is sent.
	DefaultTenant string
	// Limits, when set, are the rate limits, shared by the generations of
	// a server (see Limits); RatePerSecond and Burst are then ignored.
	Limits *Limits
	// RatePerSecond and Burst limit requests per token and, with the same
	// figures, per tenant, in limits of the stage's own; RatePerSecond 0
	// disables limiting.
	RatePerSecond float64
	Burst         int
}

// ParseHash reads a token hash written as "sha256:<64 hex digits>".
func ParseHash(s string) ([sha256.Size]byte, error) {
	var h [sha256.Size]byte
	hexPart, ok := strings.CutPrefix(s, "sha256:")
	if !ok {
		return h, fmt.Errorf("want sha256:<64 hex digits>")
	}
	b, err := hex.DecodeString(hexPart)
	if err != nil || len(b) != sha256.Size {
		return h, fmt.Errorf("want sha256:<64 hex digits>")
	}
	copy(h[:], b)
	return h, nil
}

// HashToken returns the configuration form of a token's hash.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// New builds the stage.
func New(cfg Config) (*Auth, error) {
	if len(cfg.Tokens) == 0 {
		return nil, fmt.Errorf("auth: no tokens configured")
	}
	switch cfg.ActorPolicy {
	case "":
		cfg.ActorPolicy = ActorFromToken
	case ActorFromToken, ActorRequired:
	default:
		return nil, fmt.Errorf("auth: unknown actor policy %q (want token or require)", cfg.ActorPolicy)
	}
	if cfg.DefaultTenant == "" {
		cfg.DefaultTenant = "default"
	}
	a := &Auth{cfg: cfg}
	switch {
	case cfg.Limits != nil:
		a.limits = cfg.Limits
	case cfg.RatePerSecond > 0:
		r := Rate{PerSecond: cfg.RatePerSecond, Burst: cfg.Burst}
		a.limits = NewLimits(0)
		a.limits.Configure(r, r)
	}
	return a, nil
}

// Setup builds the stage from its configuration: the actors section, the
// tokens (parsed by the host from the file's tokens), and the rate limits
// the server keeps across generations (RateConfig.Rates configures them).
func Setup(a Actors, tokens []Token, limits *Limits) (*Auth, error) {
	return New(Config{Tokens: tokens, ActorPolicy: ActorPolicy(a.Missing), DefaultTenant: a.DefaultTenant, Limits: limits})
}
