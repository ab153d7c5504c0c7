package server_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

const oneCluster = `
listeners:
  - name: edge
    address: 127.0.0.1:10000
clusters:
  - name: runedge
    endpoints: [127.0.0.1:8080]
`

const twoClusters = `
listeners:
  - name: edge
    address: 127.0.0.1:10000
    cluster: runedge
clusters:
  - name: runedge
    endpoints: [127.0.0.1:8080, 127.0.0.1:8081]
  - name: authz
    endpoints: [127.0.0.1:9001]
ext_authz:
  grpc: {cluster: authz}
`

var (
	envoyNode  = &core.Node{Id: "envoy-1", UserAgentName: "envoy"}
	clientNode = &core.Node{Id: "grpc-1", UserAgentName: "gRPC Go"}
)

// names decodes the resources of r with the message type new returns and
// lists their names.
func names[M interface {
	proto.Message
	GetName() string
}](t *testing.T, r interface{ GetResources() []*anypb.Any }, newM func() M) []string {
	t.Helper()
	var out []string
	for _, a := range r.GetResources() {
		m := newM()
		if err := a.UnmarshalTo(m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m.GetName())
	}
	slices.Sort(out)
	return out
}

func listenerNames(t *testing.T, r *discovery.DiscoveryResponse) []string {
	return names(t, r, func() *listener.Listener { return &listener.Listener{} })
}

func clusterNames(t *testing.T, r *discovery.DiscoveryResponse) []string {
	return names(t, r, func() *cluster.Cluster { return &cluster.Cluster{} })
}

func ack(r *discovery.DiscoveryResponse) *discovery.DiscoveryRequest {
	return &discovery.DiscoveryRequest{TypeUrl: r.GetTypeUrl(), VersionInfo: r.GetVersionInfo(), ResponseNonce: r.GetNonce()}
}

// TestADSAckNack: an Envoy node gets the socket listeners (and not the
// API listeners of gRPC clients), its ACK and its NACK are recorded in the
// control plane's status, and the NACK is logged with the node's reason.
func TestADSAckNack(t *testing.T) {
	p := startPlane(t, map[string]string{"gateway.yaml": oneCluster})
	env := openSotW(t, p)
	env.send(t, &discovery.DiscoveryRequest{Node: envoyNode, TypeUrl: resource.ListenerType})
	r1 := env.next(t, 5*time.Second)
	if r1.GetVersionInfo() != p.srv.Version() || r1.GetVersionInfo() == "" {
		t.Fatalf("version %q, server serves %q", r1.GetVersionInfo(), p.srv.Version())
	}
	if got := listenerNames(t, r1); !slices.Equal(got, []string{"edge"}) {
		t.Fatalf("Envoy got listeners %v, want only the socket listener edge", got)
	}
	env.send(t, ack(r1))
	waitFor(t, 5*time.Second, "the ACK in the status", func() bool {
		return p.srv.Status().Nodes["envoy-1"].Types["Listener"].Acked == r1.GetVersionInfo()
	})
	if !p.srv.Status().Nodes["envoy-1"].Connected {
		t.Fatal("a node with an open stream shows as disconnected")
	}

	p.edit(t, "gateway.yaml", twoClusters)
	r2 := env.next(t, 5*time.Second)
	if r2.GetVersionInfo() == r1.GetVersionInfo() {
		t.Fatalf("no new version after the edit: %s", r2.GetVersionInfo())
	}
	env.send(t, &discovery.DiscoveryRequest{
		TypeUrl: resource.ListenerType, VersionInfo: r1.GetVersionInfo(), ResponseNonce: r2.GetNonce(),
		ErrorDetail: &status.Status{Code: 3, Message: "test refuses this listener"},
	})
	waitFor(t, 5*time.Second, "the NACK in the status", func() bool {
		st := p.srv.Status().Nodes["envoy-1"].Types["Listener"]
		return st.Rejected == r2.GetVersionInfo() && st.Error == "test refuses this listener" && st.Acked == r1.GetVersionInfo()
	})
	if !p.logs.Contains("node rejected configuration") || !p.logs.Contains("test refuses this listener") {
		t.Fatalf("the NACK was not logged:\n%s", p.logs.String())
	}
	// The refused version is not sent again; the next one is.
	p.edit(t, "gateway.yaml", strings.Replace(oneCluster, "8080", "8082", 1))
	r3 := env.next(t, 5*time.Second)
	if r3.GetVersionInfo() == r2.GetVersionInfo() {
		t.Fatalf("the refused version %s was sent again", r2.GetVersionInfo())
	}
	if r3.GetVersionInfo() != p.srv.Version() {
		t.Fatalf("after the edit: version %s, want %s", r3.GetVersionInfo(), p.srv.Version())
	}

	// A gRPC client's view of the same version has an API listener per
	// cluster as well.
	cl := openSotW(t, p)
	cl.send(t, &discovery.DiscoveryRequest{Node: clientNode, TypeUrl: resource.ListenerType})
	if got := listenerNames(t, cl.next(t, 5*time.Second)); !slices.Equal(got, []string{"edge", "runedge"}) {
		t.Fatalf("gRPC client got listeners %v", got)
	}
}

// TestFileChange: a valid edit reaches a subscribed node within a second;
// an invalid one is refused with a message naming the field, nothing is
// pushed, new nodes still get the last good version, and the next valid
// edit is pushed again.
func TestFileChange(t *testing.T) {
	p := startPlane(t, map[string]string{"gateway.yaml": oneCluster})
	env := openSotW(t, p)
	env.send(t, &discovery.DiscoveryRequest{Node: envoyNode, TypeUrl: resource.ClusterType})
	r1 := env.next(t, 5*time.Second)
	env.send(t, ack(r1))

	start := time.Now()
	p.edit(t, "gateway.yaml", twoClusters)
	r2 := env.next(t, time.Second)
	t.Logf("new version %s reached the node %v after the edit", r2.GetVersionInfo(), time.Since(start))
	if r2.GetVersionInfo() == r1.GetVersionInfo() || !slices.Equal(clusterNames(t, r2), []string{"authz", "runedge"}) {
		t.Fatalf("after the edit: version %s (was %s), clusters %v", r2.GetVersionInfo(), r1.GetVersionInfo(), clusterNames(t, r2))
	}
	env.send(t, ack(r2))

	p.edit(t, "gateway.yaml", strings.Replace(twoClusters, "127.0.0.1:10000", "localhost:10000", 1))
	waitFor(t, 5*time.Second, "the rejection to be logged", func() bool { return p.logs.Contains("gateway file rejected") })
	if !p.logs.Contains("listeners[0].address") {
		t.Fatalf("the rejection does not name the field:\n%s", p.logs.String())
	}
	env.none(t)
	if p.srv.Version() != r2.GetVersionInfo() {
		t.Fatalf("serving %s after a bad edit, want the last good %s", p.srv.Version(), r2.GetVersionInfo())
	}
	late := openSotW(t, p)
	late.send(t, &discovery.DiscoveryRequest{Node: &core.Node{Id: "envoy-2", UserAgentName: "envoy"}, TypeUrl: resource.ClusterType})
	if r := late.next(t, 5*time.Second); r.GetVersionInfo() != r2.GetVersionInfo() || len(r.GetResources()) != 2 {
		t.Fatalf("a node connecting after the bad edit got version %s with %d clusters, want %s with 2",
			r.GetVersionInfo(), len(r.GetResources()), r2.GetVersionInfo())
	}

	p.edit(t, "gateway.yaml", oneCluster)
	if r3 := env.next(t, time.Second); r3.GetVersionInfo() != r1.GetVersionInfo() {
		t.Fatalf("back to the first file: version %s, want %s (versions follow content)", r3.GetVersionInfo(), r1.GetVersionInfo())
	}
}
