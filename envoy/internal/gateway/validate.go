package gateway

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// nameRE keeps names usable as Envoy resource names, stat prefixes and
// gRPC target names (xds:///<cluster>).
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// Defaults of the timeouts; documented in envoy/README.md.
const (
	DefaultConnect      = 5 * time.Second
	DefaultStreamIdle   = 5 * time.Minute
	DefaultAuthzTimeout = time.Second
)

// Validate checks every field and reports all problems, each naming its
// field as it is written in the file.
func (f *File) Validate() error {
	v := &validator{}
	if len(f.Listeners) == 0 && len(f.Chains) == 0 {
		v.bad("listeners", "the file configures nothing: want listeners, chains or both")
	}
	clusters := map[string]bool{}
	for _, c := range f.Clusters {
		clusters[c.Name] = c.Name != ""
	}
	listeners, addrs := map[string]bool{}, map[string]bool{}
	for i, l := range f.Listeners {
		field := fmt.Sprintf("listeners[%d]", i)
		v.name(field+".name", l.Name, listeners)
		if clusters[l.Name] {
			v.bad(field+".name", "%q is also a cluster name; gRPC clients resolve clusters as listeners of the same name", l.Name)
		}
		v.listenAddress(field+".address", l.Address, addrs)
		switch {
		case l.Cluster == "" && len(f.Clusters) != 1:
			v.bad(field+".cluster", "is required when the file has %d clusters", len(f.Clusters))
		case l.Cluster != "" && !clusters[l.Cluster]:
			v.bad(field+".cluster", "%q is not a cluster in clusters", l.Cluster)
		}
		if l.TLS != nil {
			v.absFile(field+".tls.cert_file", l.TLS.CertFile)
			v.absFile(field+".tls.key_file", l.TLS.KeyFile)
		}
	}
	seen := map[string]bool{}
	for i, c := range f.Clusters {
		v.cluster(fmt.Sprintf("clusters[%d]", i), c, seen)
	}
	v.duration("timeouts.connect", f.Timeouts.Connect)
	v.duration("timeouts.stream_idle", f.Timeouts.StreamIdle)
	if a := f.ExtAuthz; a != nil {
		v.extAuthz(a, clusters)
	}
	for _, ep := range slices.Sorted(maps.Keys(f.Chains)) {
		ch, field := f.Chains[ep], "chains."+ep
		if ep != ChainChat && ep != ChainResponses {
			v.bad(field, "unknown endpoint (want %s or %s)", ChainChat, ChainResponses)
		}
		if ch.MapRequest == "" {
			v.bad(field+".map_request", "is required (a plugin file)")
		}
		if ch.Translate == "" {
			v.bad(field+".translate", "is required (a plugin file)")
		}
	}
	return errors.Join(v.errs...)
}

// Duration parses a duration field, or returns def when it is empty.
func Duration(s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (e.g. 500ms, 10s, 5m)", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be positive, got %s", s)
	}
	return d, nil
}

// SplitEndpoint splits host:port and checks the port.
func SplitEndpoint(s string) (host string, port uint32, err error) {
	host, p, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return "", 0, fmt.Errorf("want host:port, got %q", s)
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 {
		return "", 0, fmt.Errorf("port of %q must be 1-65535", s)
	}
	return host, uint32(n), nil
}

type validator struct{ errs []error }

func (v *validator) bad(field, format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
}

func (v *validator) name(field, name string, seen map[string]bool) {
	switch {
	case name == "":
		v.bad(field, "is required")
	case !nameRE.MatchString(name):
		v.bad(field, "%q: want letters, digits, . _ - (at most 100, starting with a letter or digit)", name)
	case seen[name]:
		v.bad(field, "%q is used twice", name)
	}
	seen[name] = true
}

func (v *validator) cluster(field string, c Cluster, seen map[string]bool) {
	v.name(field+".name", c.Name, seen)
	if len(c.Endpoints) == 0 {
		v.bad(field+".endpoints", "at least one host:port is required")
	}
	eps := map[string]bool{}
	for j, ep := range c.Endpoints {
		f := fmt.Sprintf("%s.endpoints[%d]", field, j)
		if _, _, err := SplitEndpoint(ep); err != nil {
			v.bad(f, "%v", err)
		} else if eps[ep] {
			v.bad(f, "%q is listed twice", ep)
		}
		eps[ep] = true
	}
}

// listenAddress wants an IP: Envoy binds socket addresses and does not
// resolve names for listeners.
func (v *validator) listenAddress(field, addr string, seen map[string]bool) {
	host, _, err := SplitEndpoint(addr)
	switch {
	case err != nil:
		v.bad(field, "%v", err)
	case net.ParseIP(host) == nil:
		v.bad(field, "%q: the host must be an IP address (e.g. 0.0.0.0)", addr)
	case seen[addr]:
		v.bad(field, "%q is used by two listeners", addr)
	}
	seen[addr] = true
}

// absFile wants an absolute path: the file is read by Envoy, on its own
// machine, so a path relative to the gateway file would mean nothing there.
func (v *validator) absFile(field, p string) {
	switch {
	case p == "":
		v.bad(field, "is required")
	case !filepath.IsAbs(p):
		v.bad(field, "%q must be absolute (Envoy reads it on its own machine)", p)
	}
}

func (v *validator) duration(field, s string) {
	if _, err := Duration(s, time.Second); err != nil {
		v.bad(field, "%v", err)
	}
}

func (v *validator) extAuthz(a *ExtAuthz, clusters map[string]bool) {
	svc, kind := a.GRPC, "grpc"
	switch {
	case a.GRPC != nil && a.HTTP != nil:
		v.bad("ext_authz", "set grpc or http, not both")
		return
	case a.HTTP != nil:
		svc, kind = a.HTTP, "http"
	case a.GRPC == nil:
		v.bad("ext_authz", "set grpc or http")
		return
	}
	field := "ext_authz." + kind
	switch {
	case svc.Cluster == "":
		v.bad(field+".cluster", "is required")
	case !clusters[svc.Cluster]:
		v.bad(field+".cluster", "%q is not a cluster in clusters", svc.Cluster)
	}
	if kind == "grpc" && svc.PathPrefix != "" {
		v.bad(field+".path_prefix", "applies to http only")
	}
	if svc.PathPrefix != "" && !strings.HasPrefix(svc.PathPrefix, "/") {
		v.bad(field+".path_prefix", "%q must start with /", svc.PathPrefix)
	}
	v.duration("ext_authz.timeout", a.Timeout)
}
