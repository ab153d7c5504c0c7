package translate

import (
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"
	"google.golang.org/protobuf/types/known/anypb"
)

// downstreamTLS terminates TLS with the certificate files Envoy reads
// itself. ALPN offers h2 and http/1.1, so HTTP/2 clients multiplex their
// streams on one connection.
func downstreamTLS(t *TLS) (*core.TransportSocket, error) {
	ctx := &tlsv3.DownstreamTlsContext{CommonTlsContext: &tlsv3.CommonTlsContext{
		TlsCertificates: []*tlsv3.TlsCertificate{{
			CertificateChain: &core.DataSource{Specifier: &core.DataSource_Filename{Filename: t.CertFile}},
			PrivateKey:       &core.DataSource{Specifier: &core.DataSource_Filename{Filename: t.KeyFile}},
		}},
		AlpnProtocols: []string{"h2", "http/1.1"},
	}}
	a, err := anypb.New(ctx)
	if err != nil {
		return nil, err
	}
	return &core.TransportSocket{Name: wellknown.TransportSocketTLS, ConfigType: &core.TransportSocket_TypedConfig{TypedConfig: a}}, nil
}
