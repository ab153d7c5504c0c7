package server

import core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

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
// "gRPC Go", "grpc-java"… for gRPC clients, "runedge" for hosts).
type groupOf struct{}

func (groupOf) ID(n *core.Node) string {
	if n.GetUserAgentName() == "envoy" {
		return proxyGroup
	}
	return clientGroup
}
