package server_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	_ "google.golang.org/grpc/xds" // the xds:/// resolver and its balancers
)

// childTarget, when set, makes the test binary a gRPC xDS client instead
// of running tests: grpc-go reads its bootstrap from the environment when
// the process starts, so the client must be a process started with the
// control plane's address already known.
const childTarget = "RUNEDGE_TEST_GRPC_XDS_TARGET"

const healthService = "runedge.xds.test"

func TestMain(m *testing.M) {
	if target := os.Getenv(childTarget); target != "" {
		os.Exit(grpcClientChild(target))
	}
	os.Exit(m.Run())
}

// grpcClientChild resolves target through the control plane and calls the
// health service behind it.
func grpcClientChild(target string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial:", err)
		return 1
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: healthService}, grpc.WaitForReady(true))
	if err != nil {
		fmt.Fprintln(os.Stderr, "check:", err)
		return 1
	}
	fmt.Printf("%s %s via %s\n", healthService, resp.GetStatus(), target)
	return 0
}

// TestGRPCXDSClient: grpc-go's own xDS client, configured only by its
// bootstrap, resolves a cluster of the gateway file as xds:///<cluster>
// (API listener → inline route → EDS cluster → endpoints) and makes a real
// call to the server behind it. It reaches the control plane over mutual
// TLS, with the certificate files named in its bootstrap.
func TestGRPCXDSClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	backend := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		calls.Add(1)
		return h(ctx, req)
	}))
	hs := health.NewServer()
	hs.SetServingStatus(healthService, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(backend, hs)
	go backend.Serve(ln)
	t.Cleanup(backend.Stop)

	p := startPlane(t, map[string]string{"gateway.yaml": fmt.Sprintf(`
listeners:
  - name: edge
    address: 127.0.0.1:10000
clusters:
  - name: backend
    endpoints: [%q]
    http2: true
`, ln.Addr().String())})

	bootstrap := fmt.Sprintf(`{
  "xds_servers": [{"server_uri": %q, "server_features": ["xds_v3"], "channel_creds": [{"type": "tls", "config": {
    "ca_certificate_file": %q, "certificate_file": %q, "private_key_file": %q}}]}],
  "node": {"id": "grpc-test-client"}
}`, p.ads, p.pki.CAFile, p.pki.clientCert, p.pki.clientKey)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GRPC_XDS_BOOTSTRAP_CONFIG="+bootstrap, childTarget+"=xds:///backend")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), healthService+" SERVING via xds:///backend") {
		t.Fatalf("gRPC xDS client: %v\n%s", err, out)
	}
	if calls.Load() != 1 {
		t.Fatalf("the backend saw %d calls, want 1", calls.Load())
	}
	st := p.srv.Status().Nodes["grpc-test-client"]
	for _, typ := range []string{"Listener", "Cluster", "ClusterLoadAssignment"} {
		if st.Types[typ].Acked != p.srv.Version() {
			t.Errorf("the gRPC client's %s status is %+v, want version %s acked", typ, st.Types[typ], p.srv.Version())
		}
	}
	waitFor(t, 5*time.Second, "the exited client to show as disconnected", func() bool {
		return !p.srv.Status().Nodes["grpc-test-client"].Connected
	})
}
