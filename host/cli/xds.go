package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/runedge/runedge/envoy/bootstrap"
	"github.com/runedge/runedge/envoy/server"
)

// Defaults of `runedge xds`.
const (
	defaultXDSListen  = "127.0.0.1:18000"
	defaultXDSHTTP    = "127.0.0.1:18001"
	defaultXDSPlugins = "data/xds-store"
)

// xds runs the control plane, or writes an Envoy bootstrap for it.
func xds(ctx context.Context, args []string, env Env) error {
	if len(args) > 0 && args[0] == "bootstrap" {
		return xdsBootstrap(args[1:], env)
	}
	fs := flag.NewFlagSet("xds", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	cfgPath := fs.String("config", "", "gateway file (YAML); watched, every valid change is pushed")
	listen := fs.String("listen", defaultXDSListen, "ADS gRPC address (Envoy, gRPC clients, hosts)")
	httpAddr := fs.String("http", defaultXDSHTTP, "HTTP address: plugin bytes (/plugins/<sha256>) and rollout status (/status)")
	plugins := fs.String("plugins", defaultXDSPlugins, "directory keeping published plugins, named by sha256")
	pluginsURL := fs.String("plugins-url", "", "base URL hosts fetch plugins from (default https://<--http address>)")
	cert := fs.String("tls-cert", "", "the control plane's certificate (PEM), for ADS and the plugin server")
	key := fs.String("tls-key", "", "the key of --tls-cert (PEM)")
	clientCA := fs.String("client-ca", "", "CA certificate (PEM) every client (Envoy, host) must present a certificate of")
	insecureFlag := fs.Bool("insecure", false, "serve ADS and plugins in plaintext to anyone (tests and trusted networks only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cfgPath == "" {
		return errors.New("--config is required (the gateway file)")
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, nil))
	cfg := server.Config{GatewayFile: *cfgPath, Insecure: *insecureFlag, Log: log}
	switch {
	case *cert != "" || *key != "" || *clientCA != "":
		if *insecureFlag {
			return errors.New("--insecure and --tls-cert/--tls-key/--client-ca exclude each other")
		}
		var err error
		if cfg.TLS, err = server.ServerTLS(*cert, *key, *clientCA); err != nil {
			return fmt.Errorf("--tls-cert/--tls-key/--client-ca: %w", err)
		}
	case !*insecureFlag:
		return errors.New("--tls-cert, --tls-key and --client-ca are required (mutual TLS with Envoy and the hosts), or --insecure for plaintext")
	}
	store, err := server.OpenStore(*plugins)
	if err != nil {
		return err
	}
	grpcLn, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	defer grpcLn.Close()
	httpLn, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		return err
	}
	defer httpLn.Close()
	scheme := "https"
	if cfg.TLS == nil {
		scheme = "http"
	}
	base, err := pluginBase(*pluginsURL, scheme, httpLn.Addr().String())
	if err != nil {
		return err
	}
	cfg.Store, cfg.PluginsURL = store, base
	srv, err := server.New(ctx, cfg)
	if err != nil {
		return err
	}
	log.Info("runedge xds: serving", "ads", grpcLn.Addr().String(), "http", httpLn.Addr().String(),
		"plugins_url", base, "mutual_tls", cfg.TLS != nil, "version", srv.Version())
	return srv.Serve(ctx, grpcLn, httpLn)
}

// pluginBase is the URL hosts fetch plugins from. Without --plugins-url it
// is the bound HTTP address itself, which only works when that is an
// address hosts can reach: 0.0.0.0 is not one.
func pluginBase(flagURL, scheme, httpAddr string) (string, error) {
	if flagURL != "" {
		return strings.TrimRight(flagURL, "/"), nil
	}
	host, _, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return "", fmt.Errorf("--http: want host:port, got %q", httpAddr)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return "", fmt.Errorf("--plugins-url is required when --http listens on all interfaces (%s): hosts need an address they can reach", httpAddr)
	}
	return scheme + "://" + httpAddr, nil
}

// xdsBootstrap writes the Envoy bootstrap pointing at the control plane.
func xdsBootstrap(args []string, env Env) error {
	fs := flag.NewFlagSet("xds bootstrap", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var o bootstrap.Options
	fs.StringVar(&o.XDS, "xds", "", "control plane ADS address as Envoy reaches it (host:port)")
	fs.StringVar(&o.NodeID, "node", "", "node ID of this Envoy")
	fs.StringVar(&o.Cluster, "cluster", "", "node cluster (default runedge-edge)")
	fs.StringVar(&o.Admin, "admin", "", "Envoy admin address (default 127.0.0.1:9901)")
	fs.BoolVar(&o.Delta, "delta", false, "use incremental (delta) xDS")
	fs.StringVar(&o.CAFile, "ca", "", "CA certificate (PEM) of the control plane's certificate, as a path on Envoy's machine")
	fs.StringVar(&o.CertFile, "cert", "", "Envoy's client certificate (PEM) for the control plane, as a path on Envoy's machine")
	fs.StringVar(&o.KeyFile, "key", "", "the key of --cert (PEM), as a path on Envoy's machine")
	fs.BoolVar(&o.Insecure, "insecure", false, "plaintext ADS (tests and trusted networks only)")
	out := fs.String("o", "-", "output file (- for stdout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.XDS == "" || o.NodeID == "" {
		return errors.New("--xds and --node are required")
	}
	cmd := fmt.Sprintf("runedge xds bootstrap --xds %s --node %s", o.XDS, o.NodeID)
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "xds" && f.Name != "node" && f.Name != "o" {
			cmd += fmt.Sprintf(" --%s %s", f.Name, f.Value)
		}
	})
	y, err := bootstrap.YAML(o, cmd)
	if err != nil {
		return err
	}
	if o.Insecure {
		fmt.Fprintln(env.Stderr, "runedge xds bootstrap: WARNING: --insecure: this Envoy will take its configuration over plaintext ADS")
	}
	if *out == "-" {
		_, err = env.Stdout.Write(y)
		return err
	}
	return os.WriteFile(*out, y, 0o644)
}
