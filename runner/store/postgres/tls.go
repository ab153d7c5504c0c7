package postgres

import (
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultSSLMode is the sslmode a DSN gets when it names none, PGSSLMODE
// is unset and it reaches a host over the network. libpq's own default,
// prefer, tries TLS without checking the certificate and falls back to
// plaintext, so an attacker on the path reads the run history or poses as
// the server; verify-full checks the chain (system roots, or sslrootcert)
// and the host name.
const DefaultSSLMode = "verify-full"

// parseDSN parses dsn as pgx does, with DefaultSSLMode added when the DSN
// names no sslmode, envSSLMode (PGSSLMODE, which pgx honours) is empty
// and some host is not on this machine. A loopback address or a Unix
// socket keeps pgx's default: nothing crosses a network.
func parseDSN(dsn, envSSLMode string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil || envSSLMode != "" || sslModeGiven(dsn) || len(networkHosts(&cfg.ConnConfig.Config)) == 0 {
		return cfg, err
	}
	return pgxpool.ParseConfig(withSSLMode(dsn, DefaultSSLMode))
}

// sslModeKV finds the sslmode key of a keyword/value DSN.
var sslModeKV = regexp.MustCompile(`(^|\s)sslmode\s*=`)

// sslModeGiven reports whether dsn (a URL or keyword/value pairs) names
// an sslmode.
func sslModeGiven(dsn string) bool {
	if isURL(dsn) {
		u, err := url.Parse(dsn)
		return err == nil && u.Query().Has("sslmode")
	}
	return sslModeKV.MatchString(dsn)
}

func isURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// withSSLMode adds sslmode=mode to a DSN that names none.
func withSSLMode(dsn, mode string) string {
	if !isURL(dsn) {
		return dsn + " sslmode=" + mode
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	// Appended, not re-encoded: the other parameters stay as written.
	if u.RawQuery != "" {
		u.RawQuery += "&"
	}
	u.RawQuery += "sslmode=" + mode
	return u.String()
}

// plaintextHosts are the network hosts of cfg that may be reached without
// TLS (sslmode disable, allow or prefer): their traffic, credentials
// included, may cross the network in the clear.
func plaintextHosts(cfg *pgconn.Config) []string {
	return hostsWhere(cfg, func(c *pgconn.FallbackConfig) bool { return c.TLSConfig == nil })
}

// networkHosts are the hosts of cfg that are not on this machine.
func networkHosts(cfg *pgconn.Config) []string {
	return hostsWhere(cfg, func(*pgconn.FallbackConfig) bool { return true })
}

// hostsWhere lists, once each, the hosts of cfg (the first and its
// fallbacks) that are not on this machine and satisfy keep.
func hostsWhere(cfg *pgconn.Config, keep func(*pgconn.FallbackConfig) bool) []string {
	var out []string
	for _, c := range append([]*pgconn.FallbackConfig{{Host: cfg.Host, TLSConfig: cfg.TLSConfig}}, cfg.Fallbacks...) {
		if !local(c.Host) && keep(c) && !slices.Contains(out, c.Host) {
			out = append(out, c.Host)
		}
	}
	return out
}

// local reports whether host is a Unix socket directory or a loopback
// name or address.
func local(host string) bool {
	if strings.HasPrefix(host, "/") || strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
