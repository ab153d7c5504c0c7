package server

import (
	"maps"
	"strings"
	"sync"
	"time"
)

// forgetAfter is how long a disconnected node stays in the status: long
// enough to see who went away, short enough that a fleet whose nodes come
// and go does not grow the status for ever.
const forgetAfter = 10 * time.Minute

// NodeStatus is what one node last said about each resource type.
type NodeStatus struct {
	// Connected is whether the node has a stream open.
	Connected bool `json:"connected"`
	// Types is keyed by the short type name: Listener, Cluster,
	// TypedExtensionConfig…
	Types map[string]TypeStatus `json:"types"`
}

// TypeStatus is a node's last word on one resource type.
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
	mu      sync.Mutex
	status  map[string]*NodeStatus
	streams map[string]int       // open streams per node
	gone    map[string]time.Time // when a node's last stream closed
}

func newNodes() *nodes {
	return &nodes{status: map[string]*NodeStatus{}, streams: map[string]int{}, gone: map[string]time.Time{}}
}

func (n *nodes) opened(node string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.prune()
	n.streams[node]++
	delete(n.gone, node)
	n.get(node).Connected = true
}

func (n *nodes) closed(node string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.streams[node]--; n.streams[node] > 0 {
		return
	}
	delete(n.streams, node)
	n.gone[node] = time.Now()
	n.get(node).Connected = false
}

func (n *nodes) ack(node, typeURL, version string) {
	n.update(node, typeURL, func(st *TypeStatus) { *st = TypeStatus{Acked: version} })
}

func (n *nodes) nack(node, typeURL, version, msg string) {
	n.update(node, typeURL, func(st *TypeStatus) { st.Rejected, st.Error = version, msg })
}

func (n *nodes) update(node, typeURL string, f func(*TypeStatus)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ns := n.get(node)
	st := ns.Types[shortType(typeURL)]
	f(&st)
	ns.Types[shortType(typeURL)] = st
}

// get returns node's entry, creating it. Called with mu held.
func (n *nodes) get(node string) *NodeStatus {
	ns := n.status[node]
	if ns == nil {
		ns = &NodeStatus{Types: map[string]TypeStatus{}}
		n.status[node] = ns
	}
	return ns
}

// prune forgets nodes gone for longer than forgetAfter. Called with mu
// held.
func (n *nodes) prune() {
	for node, t := range n.gone {
		if time.Since(t) > forgetAfter {
			delete(n.gone, node)
			delete(n.status, node)
		}
	}
}

// snapshot copies the status of every node.
func (n *nodes) snapshot() map[string]NodeStatus {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.prune()
	out := make(map[string]NodeStatus, len(n.status))
	for k, v := range n.status {
		out[k] = NodeStatus{Connected: v.Connected, Types: maps.Clone(v.Types)}
	}
	return out
}

// shortType turns type.googleapis.com/envoy.config.listener.v3.Listener
// into Listener.
func shortType(typeURL string) string {
	return typeURL[strings.LastIndex(typeURL, ".")+1:]
}
