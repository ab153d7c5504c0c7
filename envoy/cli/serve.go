package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"strings"

	"github.com/runedge/runedge/envoy/server"
)

// Defaults of `runedge xds`.
const (
	defaultListen  = "127.0.0.1:18000"
	defaultHTTP    = "127.0.0.1:18001"
	defaultPlugins = "data/xds-store"
)

// serve runs the control plane until ctx ends.
func serve(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("xds", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	cfgPath := fs.String("config", "", "gateway file (YAML); watched, every valid change is pushed")
	listen := fs.String("listen", defaultListen, "ADS gRPC address (Envoy, gRPC clients, hosts)")
	httpAddr := fs.String("http", defaultHTTP, "HTTP address: plugin bytes (/plugins/<sha256>) and rollout status (/status)")
	plugins := fs.String("plugins", defaultPlugins, "directory keeping published plugins, named by sha256")
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
