package ui

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// clientAddr is the address the login throttle counts: the peer's, or,
// when the peer is one of the trusted proxies (admin.ui.trusted_proxies),
// the address they name in X-Forwarded-For. The header is read from the
// right, skipping trusted proxies: each proxy appends the address it was
// connected from, so the first untrusted entry from the right is the
// client as the outermost trusted proxy saw it; entries to its left are
// the client's own word. From an untrusted peer the header is ignored.
func clientAddr(r *http.Request, trusted []netip.Prefix) string {
	peer := r.RemoteAddr
	if host, _, err := net.SplitHostPort(peer); err == nil {
		peer = host
	}
	if !isTrusted(peer, trusted) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	addr := peer
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if hop == "" {
			continue
		}
		addr = hop
		if !isTrusted(hop, trusted) {
			break
		}
	}
	if len(addr) > 64 { // a proxy writes addresses; bound what is kept
		addr = addr[:64]
	}
	return addr
}

func isTrusted(addr string, trusted []netip.Prefix) bool {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
