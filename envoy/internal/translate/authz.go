package translate

import (
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extauthz "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcher "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// extAuthzFilter checks each request's headers with the authorization
// service. The service sees the bearer token and the x-service-* headers
// (actor, tenant, request ids), which is what it needs to decide; the body
// is never sent, so nothing is buffered.
func extAuthzFilter(a *ExtAuthz) (*hcm.HttpFilter, error) {
	cfg := &extauthz.ExtAuthz{
		TransportApiVersion: core.ApiVersion_V3,
		FailureModeAllow:    a.FailureModeAllow,
		AllowedHeaders: &matcher.ListStringMatcher{Patterns: []*matcher.StringMatcher{
			{MatchPattern: &matcher.StringMatcher_Exact{Exact: "authorization"}},
			{MatchPattern: &matcher.StringMatcher_Prefix{Prefix: "x-service-"}},
		}},
	}
	timeout := durationpb.New(a.Timeout)
	if a.GRPC {
		cfg.Services = &extauthz.ExtAuthz_GrpcService{GrpcService: &core.GrpcService{
			TargetSpecifier: &core.GrpcService_EnvoyGrpc_{EnvoyGrpc: &core.GrpcService_EnvoyGrpc{ClusterName: a.Cluster}},
			Timeout:         timeout,
		}}
	} else {
		cfg.Services = &extauthz.ExtAuthz_HttpService{HttpService: &extauthz.HttpService{
			ServerUri: &core.HttpUri{
				Uri:              "http://" + a.Cluster,
				HttpUpstreamType: &core.HttpUri_Cluster{Cluster: a.Cluster},
				Timeout:          timeout,
			},
			PathPrefix: a.PathPrefix,
		}}
	}
	typed, err := anypb.New(cfg)
	if err != nil {
		return nil, err
	}
	return &hcm.HttpFilter{Name: wellknown.HTTPExternalAuthorization, ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: typed}}, nil
}
