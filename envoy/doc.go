// Package envoy will hold runedge's xDS control plane (go-control-plane):
// Envoy listeners, routes, clusters and endpoints for the three endpoints,
// and ECDS chain configuration for the hosts. It is empty until that work
// lands; `runedge serve` answers the endpoints itself.
package envoy
