package bootstrap

import (
	"net"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	matcher "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"
	"google.golang.org/protobuf/types/known/anypb"
)

// upstreamTLS is Envoy's side of the mutually authenticated ADS stream:
// it presents its certificate and accepts only a control plane whose
// certificate the CA signed and names host. Envoy checks no name unless
// told to, so the subject alt name matcher is what stops another holder
// of a certificate from the same CA from posing as the control plane.
func upstreamTLS(o Options, host string) (*core.TransportSocket, error) {
	san := &tlsv3.SubjectAltNameMatcher{
		SanType: tlsv3.SubjectAltNameMatcher_DNS,
		Matcher: &matcher.StringMatcher{MatchPattern: &matcher.StringMatcher_Exact{Exact: host}},
	}
	ctx := &tlsv3.UpstreamTlsContext{
		CommonTlsContext: &tlsv3.CommonTlsContext{
			TlsCertificates: []*tlsv3.TlsCertificate{{
				CertificateChain: file(o.CertFile),
				PrivateKey:       file(o.KeyFile),
			}},
			ValidationContextType: &tlsv3.CommonTlsContext_ValidationContext{ValidationContext: &tlsv3.CertificateValidationContext{
				TrustedCa:                 file(o.CAFile),
				MatchTypedSubjectAltNames: []*tlsv3.SubjectAltNameMatcher{san},
			}},
			AlpnProtocols: []string{"h2"},
		},
	}
	if net.ParseIP(host) != nil {
		san.SanType = tlsv3.SubjectAltNameMatcher_IP_ADDRESS
	} else {
		ctx.Sni = host
	}
	a, err := anypb.New(ctx)
	if err != nil {
		return nil, err
	}
	return &core.TransportSocket{Name: wellknown.TransportSocketTLS, ConfigType: &core.TransportSocket_TypedConfig{TypedConfig: a}}, nil
}

func file(path string) *core.DataSource {
	return &core.DataSource{Specifier: &core.DataSource_Filename{Filename: path}}
}
