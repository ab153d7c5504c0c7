package translate

import (
	"fmt"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	router "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// socketListener is an HTTP listener whose routes come over RDS (ADS), in
// the route configuration named like the listener.
func socketListener(l Listener, g *Gateway) (*listener.Listener, error) {
	filters, err := httpFilters(g)
	if err != nil {
		return nil, fmt.Errorf("listener %s: %w", l.Name, err)
	}
	m := &hcm.HttpConnectionManager{
		CodecType:  hcm.HttpConnectionManager_AUTO,
		StatPrefix: l.Name,
		RouteSpecifier: &hcm.HttpConnectionManager_Rds{Rds: &hcm.Rds{
			ConfigSource:    adsSource(),
			RouteConfigName: l.Name,
		}},
		HttpFilters: filters,
		// The only bound on a stream's life: bytes must keep flowing.
		StreamIdleTimeout: durationpb.New(g.StreamIdle),
		// An edge proxy: the client address is the peer's, and
		// x-forwarded-for from outside is not trusted.
		UseRemoteAddress: wrapperspb.Bool(true),
	}
	hcmAny, err := anypb.New(m)
	if err != nil {
		return nil, err
	}
	chain := &listener.FilterChain{
		Filters: []*listener.Filter{{
			Name:       wellknown.HTTPConnectionManager,
			ConfigType: &listener.Filter_TypedConfig{TypedConfig: hcmAny},
		}},
	}
	if l.TLS != nil {
		if chain.TransportSocket, err = downstreamTLS(l.TLS); err != nil {
			return nil, fmt.Errorf("listener %s: %w", l.Name, err)
		}
	}
	return &listener.Listener{
		Name: l.Name,
		Address: &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
			Address:       l.Host,
			PortSpecifier: &core.SocketAddress_PortValue{PortValue: l.Port},
		}}},
		FilterChains: []*listener.FilterChain{chain},
	}, nil
}

// httpFilters is the HTTP filter chain: ext_authz when configured, then
// the router. No buffer, compression or other body filter: event streams
// must flow byte for byte as the host writes them.
func httpFilters(g *Gateway) ([]*hcm.HttpFilter, error) {
	var out []*hcm.HttpFilter
	if g.ExtAuthz != nil {
		f, err := extAuthzFilter(g.ExtAuthz)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	r, err := routerFilter()
	if err != nil {
		return nil, err
	}
	return append(out, r), nil
}

// routerFilter suppresses the x-envoy-* response headers: replies reach
// clients with the host's headers only.
func routerFilter() (*hcm.HttpFilter, error) {
	a, err := anypb.New(&router.Router{SuppressEnvoyHeaders: true})
	if err != nil {
		return nil, err
	}
	return &hcm.HttpFilter{Name: wellknown.Router, ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: a}}, nil
}

// adsSource says "over the same ADS stream" for RDS and EDS.
func adsSource() *core.ConfigSource {
	return &core.ConfigSource{
		ResourceApiVersion:    core.ApiVersion_V3,
		ConfigSourceSpecifier: &core.ConfigSource_Ads{Ads: &core.AggregatedConfigSource{}},
	}
}
