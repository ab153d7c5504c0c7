package translate

import (
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	httpopts "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// healthPath is what a runedge host answers its health check on: 200 while
// it serves, 503 once it drains (SIGTERM), nothing once it is gone.
const healthPath = "/healthz"

// healthCheck takes a host out of rotation within about two seconds of its
// draining or dying (two failed checks a second apart, one second each at
// most) and back in at its first good answer. A draining host hands its
// background runs to the others at once, and a dead one's are taken over
// when their leases run out (docs/operations.md "Leases and takeover").
func healthCheck(path string) *core.HealthCheck {
	return &core.HealthCheck{
		Timeout:            durationpb.New(time.Second),
		Interval:           durationpb.New(time.Second),
		UnhealthyThreshold: wrapperspb.UInt32(2),
		HealthyThreshold:   wrapperspb.UInt32(1),
		HealthChecker: &core.HealthCheck_HttpHealthCheck_{HttpHealthCheck: &core.HealthCheck_HttpHealthCheck{
			Path: path,
		}},
	}
}

// outlierDetection ejects an endpoint between two health checks: after 5
// consecutive gateway failures (connection refused or reset, the way a
// killed host fails), for 10 s at first, never more than half of the
// cluster. Answers a live host gives on purpose (503 unavailable when it is
// at its limits) do not count: consecutive_5xx is off.
func outlierDetection() *cluster.OutlierDetection {
	return &cluster.OutlierDetection{
		Consecutive_5Xx:                    wrapperspb.UInt32(0),
		EnforcingConsecutive_5Xx:           wrapperspb.UInt32(0),
		ConsecutiveGatewayFailure:          wrapperspb.UInt32(5),
		EnforcingConsecutiveGatewayFailure: wrapperspb.UInt32(100),
		Interval:                           durationpb.New(time.Second),
		BaseEjectionTime:                   durationpb.New(10 * time.Second),
		MaxEjectionPercent:                 wrapperspb.UInt32(50),
	}
}

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
	cl.OutlierDetection = outlierDetection()
	if c.HealthPath != "" {
		cl.HealthChecks = []*core.HealthCheck{healthCheck(c.HealthPath)}
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
