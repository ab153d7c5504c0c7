package server

import (
	"context"
	"slices"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/runedge/runedge/envoy/ecds"
)

// peerNames are the names the client certificate of the stream in ctx
// vouches for (ecds.CertNames). ok is false without a verified certificate (a plaintext control
// plane, Insecure): then there is no identity to bind a node id to.
func peerNames(ctx context.Context) (names []string, ok bool) {
	p, _ := peer.FromContext(ctx)
	if p == nil {
		return nil, false
	}
	info, isTLS := p.AuthInfo.(credentials.TLSInfo)
	if !isTLS || len(info.State.VerifiedChains) == 0 || len(info.State.PeerCertificates) == 0 {
		return nil, false
	}
	return ecds.CertNames(info.State.PeerCertificates[0]), true
}

// errNodeMismatch ends a stream whose node id its certificate does not
// name: any client of the xDS CA could otherwise subscribe as another node,
// or forge its ACKs and NACKs in the control plane's status.
func errNodeMismatch(id string) error {
	return status.Errorf(codes.PermissionDenied,
		"xds: node id %q is not a name of the client certificate (URI or DNS subject alternative name, or common name)", id)
}

// identify remembers the certificate names of a stream as it opens.
func (s *streams) identify(ctx context.Context, stream int64) {
	names, ok := peerNames(ctx)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names[stream] = names
}

// claim checks the node a request of stream names (nil: the request names
// none, the stream's first node stands) against the stream's certificate.
// A stream without a certificate identity (a plaintext control plane) is
// not checked.
func (s *streams) claim(stream int64, n *core.Node) error {
	if n == nil {
		return nil
	}
	s.mu.Lock()
	names, checked := s.names[stream]
	s.mu.Unlock()
	if !checked || slices.Contains(names, n.GetId()) {
		return nil
	}
	return errNodeMismatch(n.GetId())
}
