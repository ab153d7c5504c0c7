package translate

// The intermediate description between the gateway file and Envoy's
// resources: names resolved, defaults applied, durations parsed, plugin
// files turned into content addresses. Build makes it from a checked
// gateway file; Translate reads only this, so it never re-checks the file
// and never touches the disk.

import "time"

// Gateway is a resolved gateway file.
type Gateway struct {
	Listeners []Listener
	Clusters  []Cluster
	// ExtAuthz is nil when requests are not checked.
	ExtAuthz *ExtAuthz
	// StreamIdle is the idle timeout of request streams (HCM and routes).
	StreamIdle time.Duration
	// Chains are sorted by endpoint.
	Chains []Chain
}

// Listener accepts client traffic on Host:Port and routes the runedge
// endpoints to Cluster.
type Listener struct {
	Name    string
	Host    string
	Port    uint32
	Cluster string
	// TLS is nil for plain HTTP.
	TLS *TLS
	// NativeAPI routes /runner/v1/ as well (gateway file: native_api).
	NativeAPI bool
}

// TLS names certificate files on Envoy's machine.
type TLS struct{ CertFile, KeyFile string }

// Cluster is a group of endpoints.
type Cluster struct {
	Name      string
	Endpoints []Endpoint
	// DNS is set when an endpoint is a host name: Envoy resolves it itself
	// (STRICT_DNS), since EDS carries addresses, not names.
	DNS            bool
	HTTP2          bool
	ConnectTimeout time.Duration
	// HealthPath, when set, is checked on every endpoint (runedge's
	// /healthz, which answers 503 while a host drains): a host that fails
	// it leaves rotation. Not for the authorization service, which need
	// not serve it.
	HealthPath string
}

// Endpoint is one upstream address.
type Endpoint struct {
	Host string
	Port uint32
}

// ExtAuthz is the authorization service every request is checked with.
type ExtAuthz struct {
	Cluster string
	// GRPC selects the gRPC check protocol; otherwise HTTP.
	GRPC             bool
	PathPrefix       string
	Timeout          time.Duration
	FailureModeAllow bool
}

// Chain is one endpoint's plugins, as hosts fetch them.
type Chain struct {
	Endpoint   string
	MapRequest Plugin
	Translate  Plugin
}

// Plugin is a plugin's content address and where to fetch its bytes.
type Plugin struct {
	SHA256 string
	URL    string
	// Signature is the plugin's ed25519 signature (plugins/signature),
	// from a .sig file beside it; empty when there is none.
	Signature string
}
