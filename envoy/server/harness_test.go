package server_test

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/runedge/runedge/envoy/server"
	"github.com/runedge/runedge/envoy/tlstest"
	"github.com/runedge/runedge/internal/logbuf"
)

// plane is a control plane on 127.0.0.1 serving a gateway file in a
// temporary directory.
type plane struct {
	srv      *server.Server
	dir      string
	gateway  string
	ads      string // host:port
	httpBase string // https://host:port
	logs     *logbuf.Buffer
	pki      *pki
}

// pki is the test's certificate authority: the control plane's
// certificate for 127.0.0.1 and a client certificate for the nodes.
type pki struct {
	*tlstest.PKI
	serverCert, serverKey string
	clientCert, clientKey string
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	p := &pki{PKI: tlstest.New(t, "runedge test CA")}
	p.serverCert, p.serverKey = p.Server(t, "xds", "127.0.0.1")
	// The node ids the tests claim with it: the control plane binds a
	// node id to the names of its certificate.
	p.clientCert, p.clientKey = p.Client(t, "node", "envoy-1", "envoy-2", "grpc-1", "probe", "host-1", "host-2", "host-early", "grpc-test-client")
	return p
}

// client is the TLS configuration of a node holding the client
// certificate.
func (p *pki) client(t *testing.T) *tls.Config {
	return p.ClientConfig(t, p.clientCert, p.clientKey)
}

// startPlane writes files (gateway.yaml and whatever it refers to) into a
// temporary directory and serves them until the test ends.
func startPlane(t *testing.T, files map[string]string) *plane {
	t.Helper()
	return startPlaneAt(t, newPKI(t), "127.0.0.1:0", files)
}

// startPlaneAt is startPlane with ADS on a given address, over mutual TLS
// with certificates of ca.
func startPlaneAt(t *testing.T, ca *pki, adsAddr string, files map[string]string) *plane {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		writeFile(t, filepath.Join(dir, name), body)
	}
	store, err := server.OpenStore(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	grpcLn, err := net.Listen("tcp", adsAddr)
	if err != nil {
		t.Fatal(err)
	}
	httpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &plane{dir: dir, gateway: filepath.Join(dir, "gateway.yaml"), ads: grpcLn.Addr().String(),
		httpBase: "https://" + httpLn.Addr().String(), logs: &logbuf.Buffer{}, pki: ca}
	serverTLS, err := server.ServerTLS(ca.serverCert, ca.serverKey, ca.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	log := slog.New(slog.NewTextHandler(p.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p.srv, err = server.New(ctx, server.Config{GatewayFile: p.gateway, Store: store, PluginsURL: p.httpBase, TLS: serverTLS, Log: log})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.srv.Serve(ctx, grpcLn, httpLn) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if t.Failed() {
			t.Logf("control plane log:\n%s", p.logs.String())
		}
	})
	return p
}

// edit replaces a file atomically, as editors and ConfigMap updates do, so
// the watcher never reads it half-written.
func (p *plane) edit(t *testing.T, name, body string) {
	t.Helper()
	writeFile(t, filepath.Join(p.dir, name), body)
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// dial connects to the plane's ADS as a node with a client certificate.
func dial(t *testing.T, p *plane) *grpc.ClientConn {
	t.Helper()
	return dialAs(t, p, p.pki.client(t))
}

// dialAs connects to the plane's ADS with the TLS configuration c.
func dialAs(t *testing.T, p *plane, c *tls.Config) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(p.ads, grpc.WithTransportCredentials(credentials.NewTLS(c)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// sotw is a raw state-of-the-world ADS stream whose responses arrive on a
// channel, so a test can wait for one with a deadline.
type sotw struct {
	stream discovery.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	resp   chan *discovery.DiscoveryResponse
	// err is why the stream ended; read it once resp is closed.
	err error
}

func openSotW(t *testing.T, p *plane) *sotw {
	t.Helper()
	return openSotWAs(t, p, p.pki.client(t))
}

// openSotWAs opens a stream with the TLS configuration c.
func openSotWAs(t *testing.T, p *plane, c *tls.Config) *sotw {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(dialAs(t, p, c)).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := &sotw{stream: stream, resp: make(chan *discovery.DiscoveryResponse, 16)}
	go func() {
		defer close(s.resp)
		for {
			r, err := stream.Recv()
			if err != nil {
				s.err = err
				return
			}
			s.resp <- r
		}
	}()
	return s
}

func (s *sotw) send(t *testing.T, r *discovery.DiscoveryRequest) {
	t.Helper()
	if err := s.stream.Send(r); err != nil {
		t.Fatal(err)
	}
}

// next waits for the next response.
func (s *sotw) next(t *testing.T, within time.Duration) *discovery.DiscoveryResponse {
	t.Helper()
	select {
	case r, ok := <-s.resp:
		if !ok {
			t.Fatal("stream closed")
		}
		return r
	case <-time.After(within):
		t.Fatalf("no response within %v", within)
		return nil
	}
}

// none checks that no response is pending.
func (s *sotw) none(t *testing.T) {
	t.Helper()
	select {
	case r := <-s.resp:
		t.Fatalf("unexpected response: version %s, type %s", r.GetVersionInfo(), r.GetTypeUrl())
	default:
	}
}
