package ecds

import (
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/runedge/runedge/plugins/signature"
)

// DefaultCacheDir is where Subscribe keeps fetched plugins, relative to
// the working directory like the other data of `runedge serve`.
const DefaultCacheDir = "data/xds-plugins"

// Apply installs chains, keyed by endpoint ("chat.completions",
// "responses"). Every PluginRef has Path set to a local file whose bytes
// match its SHA256. Endpoints the control plane publishes no chain for are
// absent: the host keeps what it runs for them. An error refuses the whole
// set (NACK), and the host is expected to keep its previous chains.
type Apply func(ctx context.Context, chains map[string]ChainRef) error

// Subscribe subscribes the host nodeID to the chains published by the
// control plane at addr (host:port of its ADS gRPC listener) over mutual
// TLS (see ClientTLS), with the defaults of Subscriber. It returns when
// ctx is done.
func Subscribe(ctx context.Context, addr, nodeID string, tlsConfig *tls.Config, apply Apply) error {
	s := &Subscriber{Addr: addr, NodeID: nodeID, TLS: tlsConfig}
	return s.Run(ctx, apply)
}

// Subscriber is a host's subscription to its chains.
type Subscriber struct {
	// Addr is the control plane's ADS address, host:port.
	Addr string
	// NodeID names this host in the control plane's status and logs.
	NodeID string
	// CacheDir keeps fetched plugins, named by SHA-256 (DefaultCacheDir
	// if empty).
	CacheDir string
	// TLS authenticates both ends of the ADS stream and of the control
	// plane's plugin server: it holds the host's certificate and the CA
	// that signed the control plane's (see ClientTLS). Nil only with
	// Insecure.
	TLS *tls.Config
	// Insecure allows plaintext ADS, and plain http from the control
	// plane's plugin server, when TLS is nil: anyone on the path could
	// then push chains. For tests and trusted networks only.
	Insecure bool
	// Origins are where plugins may also be fetched from, https URLs
	// (see ParseOrigin). The control plane's own plugin server, on the
	// host name of Addr, is always allowed; any other URL is refused
	// before a request is made.
	Origins []string
	// HTTP fetches from Origins (a client with a 1 minute timeout if
	// nil). Redirects are never followed, whatever its CheckRedirect.
	HTTP *http.Client
	// MaxPluginBytes bounds a download (DefaultMaxPluginBytes if 0).
	MaxPluginBytes int64
	// TrustedKeys, when set, are the only keys a plugin may be signed
	// with (plugins/signature): a chain with a plugin whose signature is
	// missing or from another key is refused before anything is fetched.
	TrustedKeys []ed25519.PublicKey
	// Log receives reconnections, applied versions and refusals.
	Log *slog.Logger

	plane                 Origin
	origins               []Origin
	planeHTTP, originHTTP *http.Client
}

// Run keeps a stream to the control plane open until ctx is done,
// reconnecting with backoff, and applies every chain set it receives. It
// returns nil when ctx is done, or an error if the subscriber is
// misconfigured.
func (s *Subscriber) Run(ctx context.Context, apply Apply) error {
	if s.Addr == "" || s.NodeID == "" || apply == nil {
		return errors.New("ecds: Addr, NodeID and apply are required")
	}
	creds, err := s.prepare()
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(s.Addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return fmt.Errorf("ecds: %w", err)
	}
	defer conn.Close()
	st := &state{}
	delay := minBackoff
	for {
		received, err := s.stream(ctx, discovery.NewAggregatedDiscoveryServiceClient(conn), apply, st)
		if ctx.Err() != nil {
			return nil
		}
		if received {
			delay = minBackoff
		}
		s.Log.Warn("xds: stream to the control plane ended; reconnecting", "addr", s.Addr, "error", err, "in", delay)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		delay = min(2*delay, maxBackoff)
	}
}

// prepare checks the configuration, fills in defaults and builds the
// fetch clients; it returns the ADS transport credentials.
func (s *Subscriber) prepare() (credentials.TransportCredentials, error) {
	if s.CacheDir == "" {
		s.CacheDir = DefaultCacheDir
	}
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	s.origins = s.origins[:0]
	for _, o := range s.Origins {
		po, err := ParseOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("ecds: %w", err)
		}
		s.origins = append(s.origins, po)
	}
	base := s.HTTP
	if base == nil {
		base = &http.Client{Timeout: time.Minute}
	}
	oc := *base
	oc.CheckRedirect = noRedirects
	s.originHTTP = &oc
	s.plane = Origin{scheme: "https", host: planeHost(s.Addr), path: "/"}
	var creds credentials.TransportCredentials
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = nil // the control plane is reached directly, like ADS
	switch {
	case s.TLS != nil:
		creds = credentials.NewTLS(s.TLS.Clone())
		transport.TLSClientConfig = s.TLS.Clone()
	case s.Insecure:
		s.Log.Warn("xds: INSECURE: plaintext ADS and plugin fetches from the control plane; anyone on the path can push chains")
		creds = insecure.NewCredentials()
		s.plane.scheme = "http"
	default:
		return nil, errors.New("ecds: TLS is required (a client certificate and the control plane's CA), or Insecure for plaintext")
	}
	s.planeHTTP = &http.Client{Timeout: time.Minute, Transport: transport, CheckRedirect: noRedirects}
	return creds, nil
}

const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// state outlives a stream: after a reconnection the subscriber tells the
// control plane what it runs, and does not re-apply an unchanged set.
type state struct {
	accepted string              // version of the last applied set
	applied  map[string]ChainRef // that set, paths included
}

// stream runs one ADS stream until it fails. received reports whether the
// control plane answered at all, to reset the backoff.
func (s *Subscriber) stream(ctx context.Context, ads discovery.AggregatedDiscoveryServiceClient, apply Apply, st *state) (received bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := ads.StreamAggregatedResources(ctx)
	if err != nil {
		return false, err
	}
	// An empty list of names is a wildcard subscription: every chain the
	// control plane publishes, whatever its endpoints.
	err = stream.Send(&discovery.DiscoveryRequest{
		Node:        &core.Node{Id: s.NodeID, UserAgentName: "runedge"},
		TypeUrl:     TypeURL,
		VersionInfo: st.accepted,
	})
	if err != nil {
		return false, err
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			return received, err
		}
		received = true
		req := &discovery.DiscoveryRequest{TypeUrl: TypeURL, ResponseNonce: resp.GetNonce()}
		if err := s.handle(ctx, resp, apply, st); err != nil {
			s.Log.Error("xds: refused chains; keeping the current ones", "version", resp.GetVersionInfo(), "error", err)
			req.VersionInfo = st.accepted
			req.ErrorDetail = &status.Status{Code: int32(codes.InvalidArgument), Message: err.Error()}
		} else {
			st.accepted = resp.GetVersionInfo()
			req.VersionInfo = st.accepted
		}
		if err := stream.Send(req); err != nil {
			return received, err
		}
	}
}

// handle decodes, fetches, verifies and applies one response.
func (s *Subscriber) handle(ctx context.Context, resp *discovery.DiscoveryResponse, apply Apply, st *state) error {
	chains := map[string]ChainRef{}
	var errs []error
	for _, a := range resp.GetResources() {
		res := &core.TypedExtensionConfig{}
		if err := a.UnmarshalTo(res); err != nil {
			errs = append(errs, fmt.Errorf("ecds: %w", err))
			continue
		}
		if !strings.HasPrefix(res.GetName(), NamePrefix) {
			continue // another extension, not for hosts
		}
		ep, c, err := Decode(res)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		chains[ep] = c
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if len(s.TrustedKeys) > 0 {
		for ep, c := range chains {
			for stage, p := range map[string]PluginRef{StageMapRequest: c.MapRequest, StageTranslate: c.Translate} {
				if err := signature.Verify(s.TrustedKeys, p.SHA256, p.Signature); err != nil {
					errs = append(errs, fmt.Errorf("ecds %s%s: %s: plugin %s: %w", NamePrefix, ep, stage, p.SHA256, err))
				}
			}
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	for ep, c := range chains {
		var err error
		if c.MapRequest.Path, err = s.fetch(ctx, c.MapRequest); err != nil {
			return fmt.Errorf("ecds %s%s: %s: %w", NamePrefix, ep, StageMapRequest, err)
		}
		if c.Translate.Path, err = s.fetch(ctx, c.Translate); err != nil {
			return fmt.Errorf("ecds %s%s: %s: %w", NamePrefix, ep, StageTranslate, err)
		}
		chains[ep] = c
	}
	if maps.Equal(chains, st.applied) {
		return nil
	}
	if err := apply(ctx, chains); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	st.applied = chains
	s.Log.Info("xds: applied chains", "version", resp.GetVersionInfo(), "endpoints", len(chains))
	return nil
}
