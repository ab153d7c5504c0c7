package ecds

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// An Origin is a place plugins may be fetched from: a scheme, a host and
// port, and a path prefix. A host fetches a plugin only when its URL falls
// under one of them, checked before any request is made: a control plane
// (or whoever speaks for it) must not be able to make a host request an
// arbitrary address, such as a cloud metadata service.
type Origin struct {
	scheme, host, port, path string
}

// ParseOrigin checks an origin written in a host's configuration: an
// https URL with a host, optionally a path prefix, and nothing else.
func ParseOrigin(s string) (Origin, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Origin{}, fmt.Errorf("plugin origin %q: %w", s, err)
	}
	switch {
	case u.Scheme != "https":
		return Origin{}, fmt.Errorf("plugin origin %q: must be an https URL", s)
	case u.Host == "" || u.Hostname() == "":
		return Origin{}, fmt.Errorf("plugin origin %q: has no host", s)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return Origin{}, fmt.Errorf("plugin origin %q: only scheme, host, port and path are allowed", s)
	}
	return newOrigin(u), nil
}

func newOrigin(u *url.URL) Origin {
	o := Origin{scheme: u.Scheme, host: strings.ToLower(u.Hostname()), port: portOf(u), path: u.EscapedPath()}
	if !strings.HasSuffix(o.path, "/") {
		o.path += "/"
	}
	return o
}

// portOf is u's port, the scheme's default when absent.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "http" {
		return "80"
	}
	return "443"
}

// contains reports whether u is under o; an origin without a port
// contains every port of its host. Paths are compared escaped and
// cleaned of dot segments first, so /plugins/../admin is not under
// /plugins/.
func (o Origin) contains(u *url.URL) bool {
	if u.Scheme != o.scheme || strings.ToLower(u.Hostname()) != o.host || (o.port != "" && portOf(u) != o.port) || u.User != nil {
		return false
	}
	p := u.EscapedPath()
	if strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") || strings.Contains(strings.ToLower(p), "%2e") {
		return false
	}
	return o.path == "/" || strings.HasPrefix(p, o.path)
}

// errOrigin refuses a URL outside every allowed origin. Its message is the
// host's own: nothing was fetched.
var errOrigin = errors.New("not under an allowed plugin origin; the host made no request")

// planeHost is the host name of the control plane's ADS address: its own
// plugin server is trusted on that host, at any port, over the same
// (mutually authenticated) TLS as ADS.
func planeHost(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return strings.ToLower(h)
}
