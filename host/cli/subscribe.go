package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"

	"github.com/runedge/runedge/envoy/ecds"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/server"
	"github.com/runedge/runedge/plugins/signature"
)

// xdsClient is how `runedge serve --xds` reaches its control plane.
type xdsClient struct {
	addr, node    string
	ca, cert, key string // mutual TLS: the control plane's CA, this host's certificate and key
	insecure      bool   // plaintext instead
}

// subscribe takes the host's chains from a control plane over ECDS: every
// update's plugins are fetched, checked against their sha256 and applied
// with the live swap; an update the host cannot apply is NACKed and the
// running chains keep serving. A host with a file configuration keeps
// working while the control plane is away.
//
// It returns the subscription as a watcher for Server.Run, which starts it
// with the server and stops it before the plugin engine closes.
func subscribe(cfg *config.Config, xo xdsClient, log *slog.Logger) (server.Watcher, error) {
	sub := &ecds.Subscriber{Addr: xo.addr, CacheDir: cfg.Path("data/xds-plugins"), Log: log,
		Origins: cfg.Plugins.Origins, Insecure: xo.insecure}
	switch {
	case xo.ca != "" || xo.cert != "" || xo.key != "":
		if xo.insecure {
			return nil, errors.New("--xds-insecure and --xds-ca/--xds-cert/--xds-key exclude each other")
		}
		var err error
		if sub.TLS, err = ecds.ClientTLS(xo.ca, xo.cert, xo.key); err != nil {
			return nil, fmt.Errorf("--xds-ca/--xds-cert/--xds-key: %w", err)
		}
	case !xo.insecure:
		return nil, errors.New("--xds needs --xds-ca, --xds-cert and --xds-key (mutual TLS with the control plane), or --xds-insecure for plaintext")
	}
	var err error
	if sub.NodeID, err = nodeID(xo.node, ecds.NodeNames(sub.TLS)); err != nil {
		return nil, err
	}
	// Check the configuration now: a mistake must stop the start, not the
	// subscription later.
	for _, o := range sub.Origins {
		if _, err := ecds.ParseOrigin(o); err != nil {
			return nil, fmt.Errorf("plugins.origins: %w", err)
		}
	}
	if sub.TrustedKeys, err = signature.ParseKeys(cfg.Plugins.TrustedKeys); err != nil {
		return nil, fmt.Errorf("plugins.trusted_keys%w", err)
	}
	return func(ctx context.Context, srv *server.Server) error {
		return sub.Run(ctx, func(ctx context.Context, chains map[string]ecds.ChainRef) error {
			m := make(map[string]config.Chain, len(chains))
			for ep, c := range chains {
				m[ep] = config.Chain{MapRequest: c.MapRequest.Path, Translate: c.Translate.Path}
			}
			return srv.ApplyChains(ctx, m)
		})
	}, nil
}

// nodeID is the node id the host subscribes as: --node, which its
// certificate must name (the control plane refuses a node id the
// certificate does not name, so the mistake stops the start), or by
// default the certificate's first name (its common name), or the host
// name without a certificate.
func nodeID(flag string, certNames []string) (string, error) {
	switch {
	case flag != "" && certNames != nil && !slices.Contains(certNames, flag):
		return "", fmt.Errorf("--node %q is not a name of --xds-cert (it names %q): the control plane would refuse it", flag, certNames)
	case flag != "":
		return flag, nil
	case len(certNames) > 0:
		return certNames[0], nil
	}
	return os.Hostname()
}
