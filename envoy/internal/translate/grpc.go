package translate

import (
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// apiListener makes cluster c resolvable by proxyless gRPC clients: a gRPC
// channel to xds:///<cluster> asks LDS for a listener of that name, which
// must be an API listener (no address; an HTTP connection manager whose
// routes send every call to the cluster). The route configuration is
// inline, so the listener needs no RDS resource of its own and snapshot
// consistency is unaffected. The only filter is the router: gRPC clients
// refuse a listener with filters they do not implement.
func apiListener(c Cluster) (*listener.Listener, error) {
	r, err := routerFilter()
	if err != nil {
		return nil, err
	}
	m := &hcm.HttpConnectionManager{
		StatPrefix: c.Name,
		RouteSpecifier: &hcm.HttpConnectionManager_RouteConfig{RouteConfig: &route.RouteConfiguration{
			Name: c.Name,
			VirtualHosts: []*route.VirtualHost{{
				Name:    c.Name,
				Domains: []string{"*"},
				Routes: []*route.Route{{
					Match:  &route.RouteMatch{PathSpecifier: &route.RouteMatch_Prefix{Prefix: "/"}},
					Action: &route.Route_Route{Route: &route.RouteAction{ClusterSpecifier: &route.RouteAction_Cluster{Cluster: c.Name}}},
				}},
			}},
		}},
		HttpFilters: []*hcm.HttpFilter{r},
	}
	a, err := anypb.New(m)
	if err != nil {
		return nil, err
	}
	return &listener.Listener{Name: c.Name, ApiListener: &listener.ApiListener{ApiListener: a}}, nil
}
