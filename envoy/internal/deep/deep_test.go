package deep

import (
	"strings"
	"testing"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	router "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	httpopts "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

func pack(t *testing.T, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// listenerWith wraps an HTTP connection manager in a listener, where
// ValidateAll cannot see it.
func listenerWith(t *testing.T, m *hcm.HttpConnectionManager) *listener.Listener {
	return &listener.Listener{Name: "l", FilterChains: []*listener.FilterChain{{
		Filters: []*listener.Filter{{Name: "hcm", ConfigType: &listener.Filter_TypedConfig{TypedConfig: pack(t, m)}}},
	}}}
}

func TestValidateOpensAny(t *testing.T) {
	rds := &hcm.HttpConnectionManager_Rds{Rds: &hcm.Rds{RouteConfigName: "edge"}}
	routerFilter := &hcm.HttpFilter{Name: "router", ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: pack(t, &router.Router{})}}
	good := &hcm.HttpConnectionManager{StatPrefix: "edge", RouteSpecifier: rds, HttpFilters: []*hcm.HttpFilter{routerFilter}}
	if err := Validate(listenerWith(t, good)); err != nil {
		t.Fatalf("a valid listener: %v", err)
	}

	// An empty stat_prefix breaks a rule of the HTTP connection manager;
	// the listener around it passes its own ValidateAll.
	bad := listenerWith(t, &hcm.HttpConnectionManager{RouteSpecifier: rds, HttpFilters: good.HttpFilters})
	if err := bad.ValidateAll(); err != nil {
		t.Fatalf("premise: ValidateAll looked inside the Any: %v", err)
	}
	if err := Validate(bad); err == nil || !strings.Contains(err.Error(), "StatPrefix") {
		t.Fatalf("Validate: %v, want the HCM's stat_prefix named", err)
	}

	// Two Anys down: a filter config inside the HCM inside the listener
	// (an HCM without a route specifier, which is required).
	inner := &hcm.HttpFilter{Name: "odd", ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: pack(t, &hcm.HttpConnectionManager{StatPrefix: "x"})}}
	deeper := listenerWith(t, &hcm.HttpConnectionManager{StatPrefix: "edge", RouteSpecifier: rds, HttpFilters: []*hcm.HttpFilter{inner, routerFilter}})
	if err := Validate(deeper); err == nil || !strings.Contains(err.Error(), "RouteSpecifier") {
		t.Fatalf("Validate of a nested Any: %v", err)
	}

	// Map values: a cluster's protocol options without a protocol.
	c := &cluster.Cluster{Name: "c", TypedExtensionProtocolOptions: map[string]*anypb.Any{
		"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": pack(t, &httpopts.HttpProtocolOptions{}),
	}}
	if err := c.ValidateAll(); err != nil {
		t.Fatalf("premise: %v", err)
	}
	if err := Validate(c); err == nil || !strings.Contains(err.Error(), "UpstreamProtocolOptions") {
		t.Fatalf("Validate of a map value: %v", err)
	}

	// A type the program does not know cannot be checked, so it fails.
	unknown := &cluster.Cluster{Name: "c", TypedExtensionProtocolOptions: map[string]*anypb.Any{
		"x": {TypeUrl: "type.googleapis.com/example.Unknown"},
	}}
	if err := Validate(unknown); err == nil || !strings.Contains(err.Error(), "example.Unknown") {
		t.Fatalf("Validate of an unknown type: %v", err)
	}
}
