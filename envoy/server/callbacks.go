package server

import (
	"context"
	"sync"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
)

// streams remembers, per stream and type, the nonce and version of the last
// response: a NACK names the nonce it refuses and carries the version the
// node keeps, so the refused version has to be looked up here. Delta
// requests carry no version at all. It also remembers each stream's node,
// which only the first request has to carry, and the names its client
// certificate vouches for (identity.go).
type streams struct {
	mu    sync.Mutex
	last  map[int64]map[string][2]string // stream → type → {nonce, version}
	nodes map[int64]*core.Node
	names map[int64][]string
}

func newStreams() *streams {
	return &streams{last: map[int64]map[string][2]string{}, nodes: map[int64]*core.Node{}, names: map[int64][]string{}}
}

// node returns the node of the stream, remembering n if it is set; first
// is true when the stream's node was not known before.
func (s *streams) node(stream int64, n *core.Node) (node *core.Node, first bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, known := s.nodes[stream]
	if n != nil {
		s.nodes[stream] = n
	}
	return s.nodes[stream], !known && n != nil
}

func (s *streams) record(stream int64, typeURL, nonce, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last[stream] == nil {
		s.last[stream] = map[string][2]string{}
	}
	s.last[stream][typeURL] = [2]string{nonce, version}
}

func (s *streams) version(stream int64, typeURL, nonce string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.last[stream][typeURL]; l[0] == nonce {
		return l[1]
	}
	return ""
}

// forget drops a closed stream and returns its node, if it had one.
func (s *streams) forget(stream int64) *core.Node {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[stream]
	delete(s.last, stream)
	delete(s.nodes, stream)
	delete(s.names, stream)
	return n
}

// callbacks turn each node's ACKs and NACKs into its status and a log line
// for every NACK: a node refusing a version keeps the previous one, so a
// refusal is invisible unless someone says so.
func (s *Server) callbacks() serverv3.Callbacks {
	// State-of-the-world and delta streams are numbered separately.
	sotw, delta := newStreams(), newStreams()
	return serverv3.CallbackFuncs{
		StreamOpenFunc: func(ctx context.Context, stream int64, _ string) error {
			sotw.identify(ctx, stream)
			return nil
		},
		StreamRequestFunc: func(stream int64, r *discovery.DiscoveryRequest) error {
			if err := s.claim(sotw, stream, r.GetNode()); err != nil {
				return err
			}
			s.reply(sotw, stream, r.GetNode(), r.GetTypeUrl(), r.GetResponseNonce(), r.GetVersionInfo(), r.GetErrorDetail())
			if r.GetErrorDetail() != nil {
				// The cache answers a request whose version differs from
				// the snapshot's, so a NACK (which carries the version the
				// node kept) would be answered with the version it just
				// refused, refused again, and so on, as fast as the
				// network allows. Marking the refused version as the one
				// the node has makes the cache wait for the next version.
				if v := sotw.version(stream, r.GetTypeUrl(), r.GetResponseNonce()); v != "" {
					r.VersionInfo = v
				}
			}
			return nil
		},
		StreamResponseFunc: func(_ context.Context, stream int64, _ *discovery.DiscoveryRequest, r *discovery.DiscoveryResponse) {
			sotw.record(stream, r.GetTypeUrl(), r.GetNonce(), r.GetVersionInfo())
		},
		StreamClosedFunc: func(stream int64, _ *core.Node) { s.closed(sotw, stream) },
		DeltaStreamOpenFunc: func(ctx context.Context, stream int64, _ string) error {
			delta.identify(ctx, stream)
			return nil
		},
		StreamDeltaRequestFunc: func(stream int64, r *discovery.DeltaDiscoveryRequest) error {
			if err := s.claim(delta, stream, r.GetNode()); err != nil {
				return err
			}
			s.reply(delta, stream, r.GetNode(), r.GetTypeUrl(), r.GetResponseNonce(), "", r.GetErrorDetail())
			return nil
		},
		StreamDeltaResponseFunc: func(stream int64, _ *discovery.DeltaDiscoveryRequest, r *discovery.DeltaDiscoveryResponse) {
			delta.record(stream, r.GetTypeUrl(), r.GetNonce(), r.GetSystemVersionInfo())
		},
		DeltaStreamClosedFunc: func(stream int64, _ *core.Node) { s.closed(delta, stream) },
	}
}

// reply records a request that answers a response (it has a nonce): a
// NACK when it carries an error, an ACK otherwise.
func (s *Server) reply(st *streams, stream int64, node *core.Node, typeURL, nonce, version string, nack *status.Status) {
	node, first := st.node(stream, node)
	if first {
		s.nodes.opened(node.GetId())
	}
	if nonce == "" {
		return // a subscription, not a reply
	}
	if nack != nil {
		rejected := st.version(stream, typeURL, nonce)
		s.nodes.nack(node.GetId(), typeURL, rejected, nack.GetMessage())
		s.log.Warn("node rejected configuration; it keeps its previous version",
			"node", node.GetId(), "type", shortType(typeURL), "rejected", rejected, "error", nack.GetMessage())
		return
	}
	if version == "" {
		version = st.version(stream, typeURL, nonce)
	}
	s.nodes.ack(node.GetId(), typeURL, version)
	s.log.Debug("node accepted configuration", "node", node.GetId(), "type", shortType(typeURL), "version", version)
}

// claim refuses, and logs, a request whose node id the stream's client
// certificate does not name; the stream ends with the error before the
// request is recorded or answered.
func (s *Server) claim(st *streams, stream int64, n *core.Node) error {
	err := st.claim(stream, n)
	if err != nil {
		s.log.Warn("xds: refused a node id its client certificate does not name", "node", n.GetId(), "err", err)
	}
	return err
}

func (s *Server) closed(st *streams, stream int64) {
	if n := st.forget(stream); n != nil {
		s.nodes.closed(n.GetId())
	}
}
