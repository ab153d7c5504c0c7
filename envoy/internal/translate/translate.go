// Package translate turns a checked gateway file into Envoy's resources in
// two steps: Build resolves it into an intermediate description (ir.go),
// Translate turns that into resources, one file per resource kind, and
// validates every resource in depth before anything is served.
//
// What the resources guarantee, for runedge's event streams:
//   - routes have no overall timeout (timeout: 0s); only an idle timeout
//     bounds a stream, so a long answer streamed token by token is never cut;
//   - the filter chain is ext_authz (optional, headers only) then the
//     router: nothing buffers bodies;
//   - request and response headers, x-service-* included, pass untouched;
//     the router adds no x-envoy-* headers of its own.
package translate

import (
	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
)

// Resources are one gateway's Envoy resources.
type Resources struct {
	// Listeners are the socket listeners Envoy accepts traffic on; each
	// has a route configuration of the same name in Routes.
	Listeners []*listener.Listener
	// APIListeners let proxyless gRPC clients resolve every cluster by its
	// name (xds:///<cluster>). Envoy cannot use them, so they are served
	// to other clients only.
	APIListeners []*listener.Listener
	Routes       []*route.RouteConfiguration
	Clusters     []*cluster.Cluster
	// Endpoints are the EDS assignments of the clusters whose endpoints
	// are all IP addresses.
	Endpoints []*endpoint.ClusterLoadAssignment
	// Extensions are the chains pushed to the hosts (ECDS).
	Extensions []*core.TypedExtensionConfig
}

// Translate builds the resources of g and validates them (Validate).
func Translate(g *Gateway) (*Resources, error) {
	r := &Resources{}
	for _, l := range g.Listeners {
		lis, err := socketListener(l, g)
		if err != nil {
			return nil, err
		}
		r.Listeners = append(r.Listeners, lis)
		r.Routes = append(r.Routes, routeConfig(l, g))
	}
	for _, c := range g.Clusters {
		cl, err := clusterOf(c)
		if err != nil {
			return nil, err
		}
		r.Clusters = append(r.Clusters, cl)
		if !c.DNS {
			r.Endpoints = append(r.Endpoints, loadAssignment(c))
		}
		api, err := apiListener(c)
		if err != nil {
			return nil, err
		}
		r.APIListeners = append(r.APIListeners, api)
	}
	for _, ch := range g.Chains {
		ext, err := chainConfig(ch)
		if err != nil {
			return nil, err
		}
		r.Extensions = append(r.Extensions, ext)
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}
