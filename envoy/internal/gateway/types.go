package gateway

import "github.com/runedge/runedge/internal/contract"

// The types below are the gateway file as written: strings where the file
// has strings, no defaults, no logic. Validate checks them and translate.Build
// turns them into the resolved description the translator reads, so that
// the file's shape can change without touching the translator.

// File is the whole gateway file.
type File struct {
	// Listeners are the addresses Envoy accepts client traffic on.
	Listeners []Listener `yaml:"listeners"`
	// Clusters are the upstreams: the runedge hosts, and services such as
	// an ext_authz server.
	Clusters []Cluster `yaml:"clusters"`
	// Timeouts apply to every listener and cluster.
	Timeouts Timeouts `yaml:"timeouts"`
	// ExtAuthz, when set, asks an authorization service about every request
	// before it is routed.
	ExtAuthz *ExtAuthz `yaml:"ext_authz"`
	// Chains are pushed to the hosts over ECDS, keyed by endpoint
	// (chat.completions, responses). Endpoints not listed keep the chain of
	// each host's own configuration file.
	Chains map[string]Chain `yaml:"chains"`

	// Dir is the directory relative paths are resolved against: the
	// gateway file's.
	Dir string `yaml:"-"`
}

// Listener is one address Envoy listens on, routing the runedge endpoints
// to one cluster.
type Listener struct {
	Name string `yaml:"name"`
	// Address is host:port, e.g. 0.0.0.0:10000.
	Address string `yaml:"address"`
	// Cluster receives the runedge routes. It may be left out when the file
	// has exactly one cluster.
	Cluster string `yaml:"cluster"`
	// TLS, when set, terminates TLS on this listener.
	TLS *TLS `yaml:"tls"`
	// NativeAPI routes the native run API (/runner/v1/) too. Off by
	// default: it reads run history, and clients of an edge seldom need it.
	NativeAPI bool `yaml:"native_api"`
}

// TLS names the certificate files as Envoy sees them (absolute paths on
// the Envoy machine or container); the control plane does not read them.
type TLS struct {
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// Cluster is a named group of endpoints.
type Cluster struct {
	Name string `yaml:"name"`
	// Endpoints are host:port. IP addresses are served over EDS; a host
	// name makes the cluster STRICT_DNS so that Envoy resolves it.
	Endpoints []string `yaml:"endpoints"`
	// HTTP2 speaks HTTP/2 to the endpoints (needed for gRPC services).
	HTTP2 bool `yaml:"http2"`
}

// Timeouts are durations such as "5s" or "5m".
type Timeouts struct {
	// Connect bounds opening a connection to an endpoint (default 5s).
	Connect string `yaml:"connect"`
	// StreamIdle closes a request stream with no bytes either way for this
	// long (default 5m). It is the only time bound on streams: routes have
	// no overall timeout, so long event streams are never cut.
	StreamIdle string `yaml:"stream_idle"`
}

// ExtAuthz is the external authorization service: exactly one of GRPC and
// HTTP.
type ExtAuthz struct {
	GRPC *AuthzService `yaml:"grpc"`
	HTTP *AuthzService `yaml:"http"`
	// Timeout bounds one check (default 1s).
	Timeout string `yaml:"timeout"`
	// FailureModeAllow lets requests through when the service cannot be
	// reached; the default refuses them.
	FailureModeAllow bool `yaml:"failure_mode_allow"`
}

// AuthzService names the cluster of the authorization service.
type AuthzService struct {
	Cluster string `yaml:"cluster"`
	// PathPrefix is prepended to the request path in HTTP checks.
	PathPrefix string `yaml:"path_prefix"`
}

// Chain is one endpoint's mapping plugins: files on the control plane's
// machine, relative to the gateway file. The control plane hashes them and
// serves their bytes to the hosts.
type Chain struct {
	MapRequest string `yaml:"map_request"`
	Translate  string `yaml:"translate"`
}

// Endpoint keys of Chains; the same as the chain keys of a host's
// configuration file.
const (
	ChainChat      = contract.EndpointChat
	ChainResponses = contract.EndpointResponses
)
