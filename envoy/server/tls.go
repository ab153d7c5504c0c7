package server

import (
	"crypto/tls"
	"errors"
	"fmt"

	"github.com/runedge/runedge/envoy/ecds"
)

// ServerTLS is the control plane's side of mutual TLS, for ADS and the
// plugin server alike: it presents certFile/keyFile and requires every
// client (Envoy, hosts, gRPC clients) to present a certificate signed by
// the CA in clientCAFile. A client without one fails the handshake before
// it can read or push anything.
func ServerTLS(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" || clientCAFile == "" {
		return nil, errors.New("xds: a certificate, its key and the clients' CA are all required for mutual TLS")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("xds: %w", err)
	}
	pool, err := ecds.CertPool(clientCAFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}, nil
}
