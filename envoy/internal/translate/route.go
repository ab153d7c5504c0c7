package translate

import (
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/types/known/durationpb"
)

// runedgeRoutes are the paths a host serves. Exact paths for the three
// compatible endpoints, a prefix for one model beneath /v1/models/, one for
// the stored responses beneath
// /v1/responses/, a prefix for the native run API (/runner/v1/runs,
// /runner/v1/runs/{id}/events, …), which is routed only on a listener whose
// gateway file entry asks for it (native_api: true). They are prefixes of
// the host's route table (internal/httproute), which
// TestRoutesCoverTheRouteTable checks them against.
//
// The responses route lets a client upgrade to a WebSocket (GET
// /v1/responses upgraded: the socket mode); the host authenticates the
// upgrade itself. Envoy keeps the socket while either side sends within the
// route's idle timeout, and the host pings idle sockets well inside it.
var runedgeRoutes = []struct {
	name      string
	match     *route.RouteMatch
	websocket bool
}{
	{"models", &route.RouteMatch{PathSpecifier: &route.RouteMatch_Path{Path: "/v1/models"}}, false},
	// One model: GET /v1/models/{model} (the SDKs' models.retrieve).
	{"model", &route.RouteMatch{PathSpecifier: &route.RouteMatch_Prefix{Prefix: "/v1/models/"}}, false},
	{"chat-completions", &route.RouteMatch{PathSpecifier: &route.RouteMatch_Path{Path: "/v1/chat/completions"}}, false},
	{"responses", &route.RouteMatch{PathSpecifier: &route.RouteMatch_Path{Path: "/v1/responses"}}, true},
	// Stored responses: GET/DELETE /v1/responses/{id}, …/input_items,
	// …/cancel, and stream resumption (GET …?stream=true).
	{"responses-stored", &route.RouteMatch{PathSpecifier: &route.RouteMatch_Prefix{Prefix: "/v1/responses/"}}, false},
	// Conversations: /v1/conversations and everything beneath it.
	{"conversations", &route.RouteMatch{PathSpecifier: &route.RouteMatch_Path{Path: "/v1/conversations"}}, false},
	{"conversations-stored", &route.RouteMatch{PathSpecifier: &route.RouteMatch_Prefix{Prefix: "/v1/conversations/"}}, false},
	{"runner", &route.RouteMatch{PathSpecifier: &route.RouteMatch_Prefix{Prefix: "/runner/v1/"}}, false},
}

// notFoundBody is the host's own 404 body, so that a client sees the same
// error whether Envoy or the host refused the path.
const notFoundBody = `{"error":{"message":"not found","type":"invalid_request_error","param":null,"code":"not_found"}}`

// routeConfig routes the runedge paths of listener l to its cluster.
//
// Each route sets timeout 0s: Envoy's default route timeout (15s) would cut
// every stream longer than that. Streams are bounded by idle_timeout
// instead, which resets whenever a byte passes. Nothing is added to or
// removed from the headers.
func routeConfig(l Listener, g *Gateway) *route.RouteConfiguration {
	vh := &route.VirtualHost{Name: l.Name, Domains: []string{"*"}}
	for _, r := range runedgeRoutes {
		if r.name == "runner" && !l.NativeAPI {
			continue
		}
		action := &route.RouteAction{
			ClusterSpecifier: &route.RouteAction_Cluster{Cluster: l.Cluster},
			Timeout:          durationpb.New(0),
			IdleTimeout:      durationpb.New(g.StreamIdle),
		}
		if r.websocket {
			action.UpgradeConfigs = []*route.RouteAction_UpgradeConfig{{UpgradeType: "websocket"}}
		}
		vh.Routes = append(vh.Routes, &route.Route{Name: r.name, Match: r.match, Action: &route.Route_Route{Route: action}})
	}
	vh.Routes = append(vh.Routes, &route.Route{
		Name:  "not-found",
		Match: &route.RouteMatch{PathSpecifier: &route.RouteMatch_Prefix{Prefix: "/"}},
		Action: &route.Route_DirectResponse{DirectResponse: &route.DirectResponseAction{
			Status: 404,
			Body:   &core.DataSource{Specifier: &core.DataSource_InlineString{InlineString: notFoundBody}},
		}},
		ResponseHeadersToAdd: []*core.HeaderValueOption{{
			Header:       &core.HeaderValue{Key: "content-type", Value: "application/json"},
			AppendAction: core.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
		}},
	})
	return &route.RouteConfiguration{Name: l.Name, VirtualHosts: []*route.VirtualHost{vh}}
}
