package translate

import (
	"fmt"
	"maps"
	"net"
	"slices"

	"github.com/runedge/runedge/envoy/internal/gateway"
)

// Publish makes the plugin file at path fetchable by the hosts and returns
// its address. The server publishes into its content-addressed store;
// tests may only hash.
type Publish func(path string) (Plugin, error)

// Build resolves a validated gateway file. It fails only when a plugin file
// cannot be published, naming the field that refers to it.
func Build(f *gateway.File, publish Publish) (*Gateway, error) {
	connect, err := gateway.Duration(f.Timeouts.Connect, gateway.DefaultConnect)
	if err != nil {
		return nil, fmt.Errorf("timeouts.connect: %w", err)
	}
	idle, err := gateway.Duration(f.Timeouts.StreamIdle, gateway.DefaultStreamIdle)
	if err != nil {
		return nil, fmt.Errorf("timeouts.stream_idle: %w", err)
	}
	g := &Gateway{StreamIdle: idle}
	if g.ExtAuthz, err = extAuthz(f.ExtAuthz); err != nil {
		return nil, err
	}
	for _, c := range f.Clusters {
		cl := Cluster{Name: c.Name, HTTP2: c.HTTP2, ConnectTimeout: connect, HealthPath: healthPath}
		// A gRPC authorization service needs HTTP/2 whatever the file says.
		if g.ExtAuthz != nil && g.ExtAuthz.GRPC && g.ExtAuthz.Cluster == c.Name {
			cl.HTTP2 = true
		}
		if g.ExtAuthz != nil && g.ExtAuthz.Cluster == c.Name {
			cl.HealthPath = ""
		}
		for _, ep := range c.Endpoints {
			host, port, err := gateway.SplitEndpoint(ep)
			if err != nil {
				return nil, fmt.Errorf("clusters %s: %w", c.Name, err)
			}
			cl.DNS = cl.DNS || net.ParseIP(host) == nil
			cl.Endpoints = append(cl.Endpoints, Endpoint{Host: host, Port: port})
		}
		g.Clusters = append(g.Clusters, cl)
	}
	for _, l := range f.Listeners {
		host, port, err := gateway.SplitEndpoint(l.Address)
		if err != nil {
			return nil, fmt.Errorf("listeners %s: %w", l.Name, err)
		}
		il := Listener{Name: l.Name, Host: host, Port: port, Cluster: l.Cluster, NativeAPI: l.NativeAPI}
		if il.Cluster == "" && len(f.Clusters) == 1 {
			il.Cluster = f.Clusters[0].Name
		}
		if l.TLS != nil {
			il.TLS = &TLS{CertFile: l.TLS.CertFile, KeyFile: l.TLS.KeyFile}
		}
		g.Listeners = append(g.Listeners, il)
	}
	for _, ep := range slices.Sorted(maps.Keys(f.Chains)) {
		ch := Chain{Endpoint: ep}
		src := f.Chains[ep]
		if ch.MapRequest, err = publish(f.Path(src.MapRequest)); err != nil {
			return nil, fmt.Errorf("chains.%s.map_request: %w", ep, err)
		}
		if ch.Translate, err = publish(f.Path(src.Translate)); err != nil {
			return nil, fmt.Errorf("chains.%s.translate: %w", ep, err)
		}
		g.Chains = append(g.Chains, ch)
	}
	return g, nil
}

func extAuthz(a *gateway.ExtAuthz) (*ExtAuthz, error) {
	if a == nil {
		return nil, nil
	}
	timeout, err := gateway.Duration(a.Timeout, gateway.DefaultAuthzTimeout)
	if err != nil {
		return nil, fmt.Errorf("ext_authz.timeout: %w", err)
	}
	out := &ExtAuthz{Timeout: timeout, FailureModeAllow: a.FailureModeAllow}
	switch {
	case a.GRPC != nil:
		out.GRPC, out.Cluster = true, a.GRPC.Cluster
	case a.HTTP != nil:
		out.Cluster, out.PathPrefix = a.HTTP.Cluster, a.HTTP.PathPrefix
	}
	return out, nil
}
