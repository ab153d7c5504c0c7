package openai

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/url"
	"syscall"
)

// transportFailure says what went wrong before the upstream answered. The
// words are ours, not the transport's, which would quote the URL.
func (p *Provider) transportFailure(reqCtx context.Context, err error) error {
	if f := watchdogFailure(reqCtx); f != nil {
		return f
	}
	if reqCtx.Err() != nil {
		return context.Cause(reqCtx) // the run ended; the service knows why
	}
	var (
		dns     *net.DNSError
		netErr  net.Error
		certErr *tls.CertificateVerificationError
		recErr  tls.RecordHeaderError
	)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return providerFailure(true, "refused the connection")
	case errors.As(err, &dns):
		return providerFailure(!dns.IsNotFound, "its host name does not resolve").saying("%v", dns)
	case errors.As(err, &certErr):
		return providerFailure(false, "its TLS certificate is not trusted").saying("%v", certErr.Err)
	case errors.As(err, &recErr):
		return providerFailure(false, "TLS handshake failed: the upstream does not speak TLS (an https base URL for an http server?)")
	case errors.As(err, &netErr) && netErr.Timeout():
		return timeoutFailure("could not connect within %s (connect timeout)", p.cfg.ConnectTimeout)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return providerFailure(true, "closed the connection before answering")
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return providerFailure(true, "the request failed").saying("%v", err)
}

// readFailure says what went wrong while reading the answer.
func readFailure(reqCtx context.Context, err error, what string) error {
	if f := watchdogFailure(reqCtx); f != nil {
		return f
	}
	if reqCtx.Err() != nil {
		return context.Cause(reqCtx)
	}
	return providerFailure(true, "%s", what).saying("%v", err)
}

// watchdogFailure is the timeout that cancelled the request, if one did.
func watchdogFailure(reqCtx context.Context) *failure {
	var f *failure
	if errors.As(context.Cause(reqCtx), &f) {
		return f
	}
	return nil
}
