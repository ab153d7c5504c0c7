package server

import (
	"maps"
	"strings"
	"sync"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
)

// Node groups. Every node of a group gets the same snapshot, whatever its
// ID, so a fleet needs no registration: a new Envoy or host is served as
// soon as it connects.
const (
	// proxyGroup is Envoy. Its snapshot has no API listeners: Envoy only
	// accepts those from its bootstrap and would log a warning for each.
	proxyGroup = "proxy"
	// clientGroup is everyone else: proxyless gRPC clients, which resolve
	// clusters through API listeners, and hosts, which ask for chains.
	clientGroup = "client"
)

// groupOf sorts nodes by the user agent they announce ("envoy" for Envoy,
// "gRPC Go", "grpc-java"… for gRPC clients).
type groupOf struct{}

func (groupOf) ID(n *core.Node) string {
	if n.GetUserAgentName() == "envoy" {
		return proxyGroup
	}
	return clientGroup
}

// TypeStatus is what a node last said about one resource type.
type TypeStatus struct {
	// Acked is the last version the node accepted.
	Acked string `json:"acked,omitempty"`
	// Rejected is the last version it refused, with its reason, while it
	// keeps running Acked. Cleared by the next acceptance.
	Rejected string `json:"rejected,omitempty"`
	Error    string `json:"error,omitempty"`
}

// nodes records, per node ID and resource type, the last ACK or NACK, so
// an operator can see how far a change has rolled out and who refused it.
type nodes struct {
	mu     sync.Mutex
	status map[string]map[string]TypeStatus
}

func newNodes() *nodes { return &nodes{status: map[string]map[string]TypeStatus{}} }

func (n *nodes) ack(node, typeURL, version string) {
	n.update(node, typeURL, func(st *TypeStatus) { *st = TypeStatus{Acked: version} })
}

func (n *nodes) nack(node, typeURL, version, msg string) {
	n.update(node, typeURL, func(st *TypeStatus) { st.Rejected, st.Error = version, msg })
}

func (n *nodes) update(node, typeURL string, f func(*TypeStatus)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.status[node] == nil {
		n.status[node] = map[string]TypeStatus{}
	}
	st := n.status[node][shortType(typeURL)]
	f(&st)
	n.status[node][shortType(typeURL)] = st
}

// snapshot copies the status of every node.
func (n *nodes) snapshot() map[string]map[string]TypeStatus {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make(map[string]map[string]TypeStatus, len(n.status))
	for k, v := range n.status {
		out[k] = maps.Clone(v)
	}
	return out
}

// shortType turns type.googleapis.com/envoy.config.listener.v3.Listener
// into Listener.
func shortType(typeURL string) string {
	return typeURL[strings.LastIndex(typeURL, ".")+1:]
}
