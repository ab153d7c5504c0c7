// Package mediaurl is the policy for the URLs of media a client sends
// (Responses input_image and input_file, chat image_url parts): runedge
// fetches none of them, but passes them to an upstream that may, so an
// upstream that fetches image URLs must not become a way for any tenant to
// reach the upstream's own network.
//
// By default a URL is https: or data:, and its host is not a private,
// loopback, link-local or unspecified address, written as a literal (in
// any of the forms a URL parser reads as an IPv4 address: 2130706433,
// 0x7f.1, 127.1) or as an obvious local name (localhost, *.localhost,
// *.local, *.internal, *.home.arpa). Names are not resolved: runedge
// fetches nothing, and a resolver's answer now need not be the upstream's
// later, so a public name that resolves to a private address is not
// caught here; the upstream's own egress policy is what stops that.
package mediaurl

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// Policy is what URLs are passed on. The zero Policy is the default:
// https: and data: only, no private, loopback or link-local hosts.
type Policy struct {
	// AllowHTTP passes http: URLs too (media.allow_http).
	AllowHTTP bool
	// AllowPrivateHosts passes URLs whose host is private, loopback,
	// link-local or a local name (media.allow_private_hosts): for an
	// upstream in a private network that fetches from it on purpose.
	AllowPrivateHosts bool
}

// Check reports why u may not be passed upstream, nil if it may.
func (p Policy) Check(u string) error {
	scheme, _, ok := strings.Cut(u, ":")
	if !ok {
		return errors.New("the URL has no scheme: send an https: URL or a data: URL")
	}
	switch strings.ToLower(scheme) {
	case "data":
		return nil
	case "https":
	case "http":
		if !p.AllowHTTP {
			return errors.New("http: URLs are not passed on (media.allow_http): send an https: URL or a data: URL")
		}
	default:
		return fmt.Errorf("%.20q URLs are not passed on: send an https: URL or a data: URL", scheme+":")
	}
	pu, err := url.Parse(u)
	if err != nil || pu.Opaque != "" || pu.Host == "" {
		return errors.New("the URL is not a well-formed absolute URL with a host")
	}
	if p.AllowPrivateHosts {
		return nil
	}
	if why := localHost(pu.Hostname()); why != "" {
		return fmt.Errorf("the URL's host is %s, which is not passed on (media.allow_private_hosts)", why)
	}
	return nil
}

// localHost says what host is when it is local ("a loopback address",
// "a local name" …), "" for a public one.
func localHost(host string) string {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return localAddr(a.Unmap())
	}
	if a, ok := legacyIPv4(h); ok {
		return localAddr(a)
	}
	if numericLast(h) {
		// A URL parser reads a host whose last label is a number as an
		// IPv4 address; one netip and legacyIPv4 cannot read is refused
		// rather than guessed at.
		return "a numeric address in an unusual form"
	}
	for _, name := range []string{"localhost", "local", "internal", "home.arpa"} {
		if h == name || strings.HasSuffix(h, "."+name) {
			return "a local name"
		}
	}
	return ""
}

func localAddr(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "a link-local address"
	case a.IsUnspecified():
		return "the unspecified address"
	case a.Is4() && netip.MustParsePrefix("100.64.0.0/10").Contains(a):
		return "a shared (carrier-grade NAT) address"
	}
	return ""
}

// legacyIPv4 reads the IPv4 forms a WHATWG URL parser accepts beside the
// dotted quad: 1 to 4 parts, each decimal, octal (leading 0) or hex (0x),
// the last filling the remaining bytes (127.1, 2130706433, 0x7f.0.0.1).
func legacyIPv4(h string) (netip.Addr, bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 || h == "" {
		return netip.Addr{}, false
	}
	var v uint64
	for i, s := range parts {
		n, ok := number(s)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v = v<<8 | n
			continue
		}
		rest := uint(4 - i)
		if n >= 1<<(8*rest) {
			return netip.Addr{}, false
		}
		v = v<<(8*rest) | n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// number reads one part of an IPv4 address: decimal, 0-led octal or 0x
// hex, at most 32 bits.
func number(s string) (uint64, bool) {
	base := uint64(10)
	switch {
	case strings.HasPrefix(s, "0x"):
		s, base = s[2:], 16
		if s == "" {
			return 0, true
		}
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" || len(s) > 11 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		var d uint64
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		n = n*base + d
	}
	return n, n <= 0xffffffff
}

// numericLast reports whether h's last label is all digits, or 0x and hex
// digits: what a URL parser takes for an IPv4 address.
func numericLast(h string) bool {
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

// CheckFileData reports why a file's data (chat file.file_data, Responses
// input_file.file_data) may not be passed upstream: it is a data: URL or
// base64, never a URL of another scheme, which an upstream that reads
// file_data as a URL (some do) would fetch.
func CheckFileData(data string) error {
	scheme, _, ok := strings.Cut(data, ":")
	if !ok || strings.EqualFold(scheme, "data") {
		return nil // base64 has no ':'
	}
	return errors.New("file_data is a data: URL or base64, not a URL to fetch")
}
