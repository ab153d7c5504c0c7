package translate

import (
	"os"
	"testing"
	"time"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"

	"github.com/runedge/runedge/envoy/internal/gateway"
)

// TestStreamSafety checks, independently of the golden files, what keeps
// event streams whole: no route timeout, an idle timeout on every route
// and connection manager, no filter but ext_authz and the router, and no
// header rewriting on the runedge routes.
func TestStreamSafety(t *testing.T) {
	b, err := os.ReadFile("testdata/in/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := gateway.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	f.Dir = "testdata/in"
	g, err := Build(f, hashOnly)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Translate(g)
	if err != nil {
		t.Fatal(err)
	}
	const idle = 15 * time.Minute
	for _, l := range res.Listeners {
		m := &hcm.HttpConnectionManager{}
		if err := l.GetFilterChains()[0].GetFilters()[0].GetTypedConfig().UnmarshalTo(m); err != nil {
			t.Fatal(err)
		}
		if m.GetStreamIdleTimeout().AsDuration() != idle {
			t.Errorf("listener %s: stream_idle_timeout %v", l.GetName(), m.GetStreamIdleTimeout().AsDuration())
		}
		if m.GetRequestTimeout().AsDuration() != 0 {
			t.Errorf("listener %s: a request timeout cuts streams", l.GetName())
		}
		for _, hf := range m.GetHttpFilters() {
			if hf.GetName() != wellknown.HTTPExternalAuthorization && hf.GetName() != wellknown.Router {
				t.Errorf("listener %s: filter %s may buffer or rewrite streams", l.GetName(), hf.GetName())
			}
		}
	}
	routes := 0
	for _, rc := range res.Routes {
		if len(rc.GetRequestHeadersToRemove())+len(rc.GetResponseHeadersToRemove())+len(rc.GetResponseHeadersToAdd())+len(rc.GetRequestHeadersToAdd()) > 0 {
			t.Errorf("route configuration %s rewrites headers", rc.GetName())
		}
		for _, vh := range rc.GetVirtualHosts() {
			for _, r := range vh.GetRoutes() {
				a, ok := r.GetAction().(*route.Route_Route)
				if !ok {
					continue
				}
				routes++
				if a.Route.GetTimeout() == nil || a.Route.GetTimeout().AsDuration() != 0 {
					t.Errorf("route %s: timeout %v, want an explicit 0s (Envoy's default is 15s)", r.GetName(), a.Route.GetTimeout())
				}
				if a.Route.GetIdleTimeout().AsDuration() != idle {
					t.Errorf("route %s: idle_timeout %v", r.GetName(), a.Route.GetIdleTimeout().AsDuration())
				}
				if len(r.GetRequestHeadersToRemove())+len(r.GetResponseHeadersToRemove())+len(r.GetResponseHeadersToAdd())+len(r.GetRequestHeadersToAdd()) > 0 {
					t.Errorf("route %s rewrites headers", r.GetName())
				}
			}
		}
	}
	// Eight routes on the listener with native_api (the three endpoints,
	// one model beneath /v1/models/, the stored responses beneath
	// /v1/responses/, /v1/conversations and beneath it, and /runner/v1/),
	// seven on the other.
	if routes != 8+7 {
		t.Fatalf("%d routes to the hosts, want 8 + 7", routes)
	}
}
