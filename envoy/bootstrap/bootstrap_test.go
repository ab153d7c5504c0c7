package bootstrap

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"

	"github.com/runedge/runedge/envoy/internal/gateway"
	"github.com/runedge/runedge/envoy/internal/protoyaml"
	"github.com/runedge/runedge/envoy/internal/translate"
	"github.com/runedge/runedge/envoy/tlstest"
	"github.com/runedge/runedge/internal/golden"
)

const command = "runedge xds bootstrap --xds xds:18000 --node edge-1 --ca /etc/envoy/xds/ca.pem --cert /etc/envoy/xds/envoy.pem --key /etc/envoy/xds/envoy-key.pem"

// TestGolden: the bootstraps of examples/envoy (mutual TLS, the control
// plane named by DNS), of a delta, IP-address setup (its certificate
// checked by IP) and of a plaintext one, byte for byte.
func TestGolden(t *testing.T) {
	certs := Options{CAFile: "/etc/envoy/xds/ca.pem", CertFile: "/etc/envoy/xds/envoy.pem", KeyFile: "/etc/envoy/xds/envoy-key.pem"}
	for name, o := range map[string]Options{
		"ads.yaml": {XDS: "xds:18000", NodeID: "edge-1",
			CAFile: certs.CAFile, CertFile: certs.CertFile, KeyFile: certs.KeyFile},
		"delta.yaml": {XDS: "10.0.0.5:18000", NodeID: "edge-2", Cluster: "eu-edge", Admin: "0.0.0.0:9901", Delta: true,
			CAFile: certs.CAFile, CertFile: certs.CertFile, KeyFile: certs.KeyFile},
		"insecure.yaml": {XDS: "xds:18000", NodeID: "edge-1", Insecure: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := YAML(o, command)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name)
			golden.Check(t, path, got)
		})
	}
}

func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{XDS: "xds:18000"}, "node ID is required"},
		{Options{XDS: "xds", NodeID: "n"}, "xds address"},
		{Options{XDS: "xds:0", NodeID: "n"}, "xds address"},
		{Options{XDS: "xds:18000", NodeID: "n", Admin: "nowhere", Insecure: true}, "admin address"},
		{Options{XDS: "xds:18000", NodeID: "n"}, "required, or insecure"},
		{Options{XDS: "xds:18000", NodeID: "n", CAFile: "/ca.pem"}, "needs the CA, the certificate and the key"},
		{Options{XDS: "xds:18000", NodeID: "n", CAFile: "/ca.pem", CertFile: "/c.pem", KeyFile: "/k.pem", Insecure: true}, "exclude each other"},
	} {
		if _, err := Build(c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}

// TestEnvoyValidates asks Envoy itself, where one is installed, whether it
// accepts the bootstrap, alone and carrying the resources served for each
// golden gateway file as static resources (validate mode checks them
// without connecting anywhere).
func TestEnvoyValidates(t *testing.T) {
	envoy, err := exec.LookPath("envoy")
	if err != nil {
		t.Skip("no envoy binary on PATH: the bootstrap and resources are checked by golden files and deep validation only")
	}
	validate := func(name string, b *bootstrapv3.Bootstrap) {
		t.Helper()
		y, err := protoyaml.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, y, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(envoy, "--mode", "validate", "-c", path).CombinedOutput(); err != nil {
			t.Errorf("envoy --mode validate %s: %v\n%s\n%s", name, err, out, y)
		}
	}
	ca := tlstest.New(t, "validate CA")
	cert, key := ca.Client(t, "envoy")
	b, err := Build(Options{XDS: "127.0.0.1:18000", NodeID: "validate", CAFile: ca.CAFile, CertFile: cert, KeyFile: key})
	if err != nil {
		t.Fatal(err)
	}
	validate("bootstrap-tls.yaml", b)
	o := Options{XDS: "127.0.0.1:18000", NodeID: "validate", Insecure: true}
	if b, err = Build(o); err != nil {
		t.Fatal(err)
	}
	validate("bootstrap.yaml", b)

	ins, _ := filepath.Glob("../internal/translate/testdata/in/*.yaml")
	if len(ins) == 0 {
		t.Fatal("no gateway files under ../internal/translate/testdata/in")
	}
	for _, in := range ins {
		f, err := gateway.Load(in)
		if err != nil {
			continue // the refusals among the golden files
		}
		g, err := translate.Build(f, func(path string) (translate.Plugin, error) {
			return translate.Plugin{SHA256: strings.Repeat("0", 64), URL: "http://xds/plugins/x"}, nil
		})
		if err != nil {
			continue
		}
		res, err := translate.Translate(g)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		b, err := Build(o)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range res.Listeners {
			// TLS listeners name certificate files that exist on the
			// Envoy machine only.
			if l.GetFilterChains()[0].GetTransportSocket() == nil {
				b.StaticResources.Listeners = append(b.StaticResources.Listeners, l)
			}
		}
		b.StaticResources.Clusters = append(b.StaticResources.Clusters, res.Clusters...)
		validate(filepath.Base(in), b)
	}
}
