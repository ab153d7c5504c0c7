// Package server is `runedge xds`: an ADS server (state-of-the-world and
// delta, on go-control-plane's snapshot cache) that serves the Envoy
// resources of a gateway file and the hosts' chains (ECDS), an HTTP server
// for the plugin bytes those chains refer to, and a watch on the gateway
// file that pushes every valid change and refuses every invalid one.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
)

// DefaultPoll is how often the gateway file is checked for changes.
const DefaultPoll = 200 * time.Millisecond

// Config is what the control plane serves and where.
type Config struct {
	// GatewayFile is the gateway YAML file; it is watched.
	GatewayFile string
	// Store holds the plugin bytes the chains refer to.
	Store *Store
	// PluginsURL is the base URL hosts fetch plugins from: this server's
	// HTTP listener as the hosts reach it (e.g. http://xds:18001).
	PluginsURL string
	// Poll is how often the gateway file is checked (DefaultPoll if 0).
	// The file is polled rather than watched with inotify: polling also
	// sees edits through symlink swaps (Kubernetes ConfigMaps), renames
	// by editors and network file systems, at the cost of one small read
	// per tick.
	Poll time.Duration
	// TLS serves ADS and the plugin server over mutual TLS (see
	// ServerTLS). Nil only with Insecure.
	TLS *tls.Config
	// Insecure serves both in plaintext when TLS is nil: anyone who can
	// reach the ports can read every chain and any node can subscribe.
	Insecure bool
	Log      *slog.Logger
}

// Server serves one gateway file to every node.
type Server struct {
	cfg   Config
	log   *slog.Logger
	cache cache.SnapshotCache
	nodes *nodes

	mu      sync.Mutex
	version string   // of the snapshot being served
	watched []string // plugin files the gateway file refers to
}

// New loads the gateway file and builds its first snapshot. A file that
// does not load or validate is an error here: the control plane does not
// start with nothing to serve.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.TLS == nil && !cfg.Insecure {
		return nil, errors.New("xds: TLS is required (a certificate, its key and the clients' CA), or Insecure for plaintext")
	}
	if cfg.TLS == nil {
		cfg.Log.Warn("xds: INSECURE: ADS and plugins served in plaintext without client authentication; anyone who reaches the ports can subscribe")
	}
	s := &Server{
		cfg:   cfg,
		log:   cfg.Log,
		nodes: newNodes(),
	}
	// ads=false: the cache answers a request for some names with those
	// names. In ADS mode it would answer only requests naming every
	// resource of the type, which gRPC clients (one listener, one cluster)
	// and hosts (their chains) never do.
	s.cache = cache.NewSnapshotCache(false, groupOf{}, logger{s.log})
	if err := s.reload(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Version is the version of the snapshot being served.
func (s *Server) Version() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// Serve answers ADS on grpcLn and plugin and status requests on httpLn,
// and watches the gateway file, until ctx is done.
func (s *Server) Serve(ctx context.Context, grpcLn, httpLn net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	xds := serverv3.NewServer(ctx, s.cache, s.callbacks())
	opts := []grpc.ServerOption{
		// xDS streams live as long as the node; keepalives find dead ones.
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
	}
	if s.cfg.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(s.cfg.TLS.Clone())))
		httpLn = tls.NewListener(httpLn, s.cfg.TLS.Clone())
	}
	gs := grpc.NewServer(opts...)
	discoverygrpc.RegisterAggregatedDiscoveryServiceServer(gs, xds)
	hs := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second,
		// Refused handshakes (clients without a certificate) go to our log.
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelInfo)}

	errc := make(chan error, 2)
	go func() { errc <- gs.Serve(grpcLn) }()
	go func() { errc <- hs.Serve(httpLn) }()
	watchDone := make(chan struct{})
	go func() { defer close(watchDone); s.watch(ctx) }()

	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	// Stop, not GracefulStop: xDS streams never end on their own, and
	// nodes reconnect and resync from their next control plane.
	cancel()
	gs.Stop()
	shutCtx, done := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer done()
	hs.Shutdown(shutCtx)
	<-watchDone
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, grpc.ErrServerStopped) {
		err = nil
	}
	return err
}
