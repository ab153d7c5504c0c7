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
	pluginsURL := fs.String("plugins-url", "", "base URL hosts fetch plugins from (default http://<--http address>)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cfgPath == "" {
		return errors.New("--config is required (the gateway file)")
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
	base, err := pluginBase(*pluginsURL, httpLn.Addr().String())
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, nil))
	srv, err := server.New(ctx, server.Config{GatewayFile: *cfgPath, Store: store, PluginsURL: base, Log: log})
	if err != nil {
		return err
	}
	log.Info("runedge xds: serving", "ads", grpcLn.Addr().String(), "http", httpLn.Addr().String(),
		"plugins_url", base, "version", srv.Version())
	return srv.Serve(ctx, grpcLn, httpLn)
}

// pluginBase is the URL hosts fetch plugins from. Without --plugins-url it
// is the bound HTTP address itself, which only works when that is an
// address hosts can reach: 0.0.0.0 is not one.
func pluginBase(flagURL, httpAddr string) (string, error) {
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
	return "http://" + httpAddr, nil
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
	if *out == "-" {
		_, err = env.Stdout.Write(y)
		return err
	}
	return os.WriteFile(*out, y, 0o644)
}
