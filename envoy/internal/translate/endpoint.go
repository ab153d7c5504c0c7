package translate

import (
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// loadAssignment puts all of c's endpoints in one locality. Envoy needs
// neither a locality nor its weight, but gRPC clients refuse a locality
// without one and drop a locality without the other, so both are set: an
// empty locality (no region or zone to speak of) of weight 1.
func loadAssignment(c Cluster) *endpoint.ClusterLoadAssignment {
	loc := &endpoint.LocalityLbEndpoints{Locality: &core.Locality{}, LoadBalancingWeight: wrapperspb.UInt32(1)}
	for _, ep := range c.Endpoints {
		loc.LbEndpoints = append(loc.LbEndpoints, &endpoint.LbEndpoint{
			HostIdentifier: &endpoint.LbEndpoint_Endpoint{Endpoint: &endpoint.Endpoint{
				Address: &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
					Address:       ep.Host,
					PortSpecifier: &core.SocketAddress_PortValue{PortValue: ep.Port},
				}}},
			}},
		})
	}
	return &endpoint.ClusterLoadAssignment{
		ClusterName: c.Name,
		Endpoints:   []*endpoint.LocalityLbEndpoints{loc},
	}
}
