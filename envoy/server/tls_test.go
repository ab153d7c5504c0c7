package server_test

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/runedge/runedge/envoy/server"
	"github.com/runedge/runedge/envoy/tlstest"
	"github.com/runedge/runedge/internal/logbuf"
)

// TestMutualTLSRefuses: the control plane answers ADS and serves plugins
// only to clients with a certificate of its clients' CA. A client without
// a certificate, with one from another CA, or in plaintext gets no
// resource and no plugin; the same request with the right certificate
// gets both.
func TestMutualTLSRefuses(t *testing.T) {
	p := startPlane(t, map[string]string{
		"gateway.yaml":        chainsGateway,
		"plugins/openai.wasm": "openai v1",
		"plugins/custom.wasm": "custom v1",
	})
	other := tlstest.New(t, "another CA")
	otherCert, otherKey := other.Client(t, "stranger")
	strangerTLS := other.ClientConfig(t, otherCert, otherKey)
	strangerTLS.RootCAs = p.pki.Pool // it trusts the plane; the plane must not trust it
	for name, creds := range map[string]credentials.TransportCredentials{
		"no certificate":   credentials.NewTLS(p.pki.ClientConfig(t, "", "")),
		"another CA":       credentials.NewTLS(strangerTLS),
		"plaintext client": insecure.NewCredentials(),
	} {
		t.Run(name, func(t *testing.T) {
			if err := adsRequest(p.ads, creds); err == nil {
				t.Fatal("the control plane answered ADS")
			}
		})
	}
	if err := adsRequest(p.ads, credentials.NewTLS(p.pki.client(t))); err != nil {
		t.Fatalf("a node with a certificate was refused: %v", err)
	}

	plugin := p.httpBase + "/plugins/" + sha("openai v1")
	for name, c := range map[string]*tls.Config{"no certificate": p.pki.ClientConfig(t, "", ""), "another CA": strangerTLS} {
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: c}}
		if resp, err := client.Get(plugin); err == nil {
			resp.Body.Close()
			t.Errorf("%s: the plugin server answered %s", name, resp.Status)
		}
	}
	if resp, err := http.Get(strings.Replace(plugin, "https://", "http://", 1)); err == nil && resp.StatusCode == 200 {
		t.Error("the plugin server served a plugin over plain HTTP")
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: p.pki.client(t)}}
	resp, err := client.Get(plugin)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("a node with a certificate could not fetch a plugin: %v %v", resp, err)
	}
	resp.Body.Close()
}

// adsRequest opens an ADS stream with creds and waits for the answer to a
// request for the chains.
func adsRequest(addr string, creds credentials.TransportCredentials) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		return err
	}
	if err := stream.Send(&discovery.DiscoveryRequest{TypeUrl: resource.ExtensionConfigType, Node: &core.Node{Id: "probe", UserAgentName: "runedge"}}); err != nil {
		return err
	}
	_, err = stream.Recv()
	return err
}

// TestPlaintextNeedsOptIn: without TLS the control plane does not start
// unless Insecure says so, and then it says it is insecure.
func TestPlaintextNeedsOptIn(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "gateway.yaml"), chainsGateway)
	writeFile(t, filepath.Join(dir, "plugins/openai.wasm"), "c")
	writeFile(t, filepath.Join(dir, "plugins/custom.wasm"), "r")
	store, err := server.OpenStore(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{GatewayFile: filepath.Join(dir, "gateway.yaml"), Store: store, PluginsURL: "http://127.0.0.1:1"}
	if _, err := server.New(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "TLS is required") {
		t.Fatalf("New without TLS: %v", err)
	}
	logs := &logbuf.Buffer{}
	cfg.Insecure, cfg.Log = true, slog.New(slog.NewTextHandler(logs, nil))
	if _, err := server.New(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if !logs.Contains("level=WARN") || !logs.Contains("INSECURE") {
		t.Fatalf("no warning logged:\n%s", logs)
	}
}
