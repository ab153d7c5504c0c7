package translate

import (
	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	httpopts "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// httpOptionsKey is where Envoy looks for a cluster's upstream HTTP
// protocol options.
const httpOptionsKey = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

// clusterOf is an EDS cluster when every endpoint is an IP address (its
// endpoints come over the same ADS stream), and a STRICT_DNS cluster with
// its endpoints inline otherwise, so that Envoy follows DNS itself.
func clusterOf(c Cluster) (*cluster.Cluster, error) {
	cl := &cluster.Cluster{
		Name:           c.Name,
		ConnectTimeout: durationpb.New(c.ConnectTimeout),
		LbPolicy:       cluster.Cluster_ROUND_ROBIN,
	}
	if c.DNS {
		cl.ClusterDiscoveryType = &cluster.Cluster_Type{Type: cluster.Cluster_STRICT_DNS}
		cl.LoadAssignment = loadAssignment(c)
	} else {
		cl.ClusterDiscoveryType = &cluster.Cluster_Type{Type: cluster.Cluster_EDS}
		cl.EdsClusterConfig = &cluster.Cluster_EdsClusterConfig{EdsConfig: adsSource()}
	}
	if c.HTTP2 {
		opts, err := anypb.New(&httpopts.HttpProtocolOptions{
			UpstreamProtocolOptions: &httpopts.HttpProtocolOptions_ExplicitHttpConfig_{
				ExplicitHttpConfig: &httpopts.HttpProtocolOptions_ExplicitHttpConfig{
					ProtocolConfig: &httpopts.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{
						Http2ProtocolOptions: &core.Http2ProtocolOptions{},
					},
				},
			},
		})
		if err != nil {
			return nil, err
		}
		cl.TypedExtensionProtocolOptions = map[string]*anypb.Any{httpOptionsKey: opts}
	}
	return cl, nil
}
