package server_test

import (
	"context"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// TestNodeIDBoundToCertificate: over mutual TLS a node id must be a name of
// the client certificate (a URI or DNS subject alternative name, or the
// common name). A host holding another certificate of the same CA cannot
// subscribe as that node, nor ACK or NACK in its name: the stream ends
// with PermissionDenied, the refusal is logged, and the node's status is
// untouched.
func TestNodeIDBoundToCertificate(t *testing.T) {
	p := startPlane(t, map[string]string{
		"gateway.yaml":        chainsGateway,
		"plugins/openai.wasm": "openai v1",
		"plugins/custom.wasm": "custom v1",
	})
	const victim = "spiffe://runedge.test/host/b"
	aCert, aKey := p.pki.Client(t, "host-a")
	bCert, bKey := p.pki.Client(t, "b", victim)
	hostA, hostB := p.pki.ClientConfig(t, aCert, aKey), p.pki.ClientConfig(t, bCert, bKey)
	node := func(id string) *core.Node { return &core.Node{Id: id, UserAgentName: "runedge"} }
	refused := func(t *testing.T, s *sotw) {
		t.Helper()
		select {
		case r, ok := <-s.resp:
			if ok {
				t.Fatalf("answered: version %s", r.GetVersionInfo())
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the stream stayed open")
		}
		if grpcstatus.Code(s.err) != codes.PermissionDenied {
			t.Fatalf("stream ended with %v, want PermissionDenied", s.err)
		}
	}

	// The victim, by its URI name, subscribes and ACKs.
	b := openSotWAs(t, p, hostB)
	b.send(t, &discovery.DiscoveryRequest{Node: node(victim), TypeUrl: resource.ExtensionConfigType})
	r := b.next(t, 5*time.Second)
	b.send(t, &discovery.DiscoveryRequest{TypeUrl: resource.ExtensionConfigType, VersionInfo: r.GetVersionInfo(), ResponseNonce: r.GetNonce()})
	waitFor(t, 5*time.Second, "the victim's ACK", func() bool {
		return p.srv.Status().Nodes[victim].Types["TypedExtensionConfig"].Acked == r.GetVersionInfo()
	})

	t.Run("subscribe as another node", func(t *testing.T) {
		s := openSotWAs(t, p, hostA)
		s.send(t, &discovery.DiscoveryRequest{Node: node(victim), TypeUrl: resource.ExtensionConfigType})
		refused(t, s)
	})
	// Host A subscribes as itself (its common name), then answers the
	// response with an ACK or a NACK naming the victim.
	for name, forged := range map[string]*discovery.DiscoveryRequest{
		"NACK as another node": {ErrorDetail: &status.Status{Code: 3, Message: "forged refusal"}},
		"ACK as another node":  {VersionInfo: "forged"},
	} {
		t.Run(name, func(t *testing.T) {
			s := openSotWAs(t, p, hostA)
			s.send(t, &discovery.DiscoveryRequest{Node: node("host-a"), TypeUrl: resource.ExtensionConfigType})
			forged.Node, forged.TypeUrl, forged.ResponseNonce = node(victim), resource.ExtensionConfigType, s.next(t, 5*time.Second).GetNonce()
			s.send(t, forged)
			refused(t, s)
		})
	}

	t.Run("delta, subscribe as another node", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stream, err := discovery.NewAggregatedDiscoveryServiceClient(dialAs(t, p, hostA)).DeltaAggregatedResources(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&discovery.DeltaDiscoveryRequest{Node: node(victim), TypeUrl: resource.ExtensionConfigType}); err != nil {
			t.Fatal(err)
		}
		if r, err := stream.Recv(); grpcstatus.Code(err) != codes.PermissionDenied {
			t.Fatalf("delta stream: %v %v, want PermissionDenied", r, err)
		}
	})

	st := p.srv.Status().Nodes[victim].Types["TypedExtensionConfig"]
	if st.Acked != r.GetVersionInfo() || st.Rejected != "" || st.Error != "" {
		t.Fatalf("the victim's status was forged: %+v", st)
	}
	if !p.logs.Contains("refused a node id its client certificate does not name") {
		t.Fatalf("refusal not logged:\n%s", p.logs)
	}
}
