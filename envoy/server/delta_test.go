package server_test

import (
	"context"
	"slices"
	"testing"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// TestDeltaADS: incremental xDS sends the clusters once, then only what a
// file edit changed: the added cluster, and the removed one by name.
func TestDeltaADS(t *testing.T) {
	p := startPlane(t, map[string]string{"gateway.yaml": twoClusters})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(dial(t, p)).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resp := make(chan *discovery.DeltaDiscoveryResponse, 4)
	go func() {
		for {
			r, err := stream.Recv()
			if err != nil {
				close(resp)
				return
			}
			resp <- r
		}
	}()
	next := func() *discovery.DeltaDiscoveryResponse {
		t.Helper()
		select {
		case r, ok := <-resp:
			if !ok {
				t.Fatal("delta stream closed")
			}
			return r
		case <-time.After(5 * time.Second):
			t.Fatal("no delta response")
			return nil
		}
	}
	clusters := func(r *discovery.DeltaDiscoveryResponse) []string {
		var out []string
		for _, res := range r.GetResources() {
			c := &cluster.Cluster{}
			if err := res.GetResource().UnmarshalTo(c); err != nil {
				t.Fatal(err)
			}
			if c.GetName() != res.GetName() {
				t.Fatalf("resource %q holds cluster %q", res.GetName(), c.GetName())
			}
			out = append(out, c.GetName())
		}
		slices.Sort(out)
		return out
	}

	// No names on the first request: a wildcard subscription.
	if err := stream.Send(&discovery.DeltaDiscoveryRequest{Node: envoyNode, TypeUrl: resource.ClusterType}); err != nil {
		t.Fatal(err)
	}
	r1 := next()
	if got := clusters(r1); !slices.Equal(got, []string{"authz", "runedge"}) {
		t.Fatalf("first delta response: %v", got)
	}
	if err := stream.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: resource.ClusterType, ResponseNonce: r1.GetNonce()}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the delta ACK in the status", func() bool {
		return p.srv.Status().Nodes["envoy-1"].Types["Cluster"].Acked == p.srv.Version()
	})

	// runedge unchanged, authz gone, extra new.
	p.edit(t, "gateway.yaml", `
listeners:
  - name: edge
    address: 127.0.0.1:10000
    cluster: runedge
clusters:
  - name: runedge
    endpoints: [127.0.0.1:8080, 127.0.0.1:8081]
  - name: extra
    endpoints: [127.0.0.1:7000]
`)
	r2 := next()
	if got := clusters(r2); !slices.Equal(got, []string{"extra"}) {
		t.Fatalf("changed clusters: %v, want only [extra]", got)
	}
	if got := r2.GetRemovedResources(); !slices.Equal(got, []string{"authz"}) {
		t.Fatalf("removed: %v, want [authz]", got)
	}
}
