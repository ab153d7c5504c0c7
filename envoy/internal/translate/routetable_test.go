package translate

import (
	"regexp"
	"strings"
	"testing"
	"time"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/runedge/runedge/internal/httproute"
)

// Envoy's routes cover runedge's route table (internal/httproute), the one
// the host serves: every public route reaches the hosts on every listener,
// the native run API only on a listener that asks for it, the host's own
// routes (the health check) never; a route the host upgrades to a
// WebSocket is upgradable in Envoy; and no Envoy route leads to the hosts
// for a path no route of the table serves.
func TestRoutesCoverTheRouteTable(t *testing.T) {
	wild := regexp.MustCompile(`\{[^}]+\}`)
	g := &Gateway{StreamIdle: time.Minute}
	for _, native := range []bool{false, true} {
		rc := routeConfig(Listener{Name: "l", Cluster: "hosts", NativeAPI: native}, g)
		routes := rc.GetVirtualHosts()[0].GetRoutes()
		used := map[string]bool{}
		for _, r := range httproute.Table {
			path := wild.ReplaceAllString(r.Pattern, "resp_x1")
			got := firstMatch(t, routes, path)
			toHosts := got.GetRoute().GetCluster() == "hosts"
			want := r.Exposure == httproute.Public || (r.Exposure == httproute.Native && native)
			if toHosts != want {
				t.Errorf("native_api %v: %s (%s) goes to route %q; to the hosts: %v, want %v", native, path, r.Pattern, got.GetName(), toHosts, want)
			}
			// A route the host upgrades to a WebSocket is upgradable in
			// Envoy, and only such a route.
			ups := got.GetRoute().GetUpgradeConfigs()
			ws := len(ups) == 1 && ups[0].GetUpgradeType() == "websocket"
			if toHosts && ws != (r.Upgrade != "") {
				t.Errorf("native_api %v: %s (%s): Envoy upgrades to a WebSocket: %v, the host: %v", native, path, r.Pattern, ws, r.Upgrade != "")
			}
			used[got.GetName()] = true
		}
		for _, r := range routes {
			if r.GetRoute().GetCluster() != "" && !used[r.GetName()] {
				t.Errorf("native_api %v: Envoy route %q matches no route of the table", native, r.GetName())
			}
		}
		if got := firstMatch(t, routes, "/v1/nothing"); got.GetDirectResponse().GetStatus() != 404 {
			t.Errorf("native_api %v: /v1/nothing goes to route %q, want Envoy's 404", native, got.GetName())
		}
	}
}

// firstMatch is the route Envoy picks for path: the first that matches.
func firstMatch(t *testing.T, routes []*route.Route, path string) *route.Route {
	t.Helper()
	for _, r := range routes {
		m := r.GetMatch()
		switch p := m.GetPathSpecifier().(type) {
		case *route.RouteMatch_Path:
			if p.Path == path {
				return r
			}
		case *route.RouteMatch_Prefix:
			if strings.HasPrefix(path, p.Prefix) {
				return r
			}
		default:
			t.Fatalf("route %q: match %T is not one this test knows", r.GetName(), p)
		}
	}
	t.Fatalf("no route matches %s", path)
	return nil
}
