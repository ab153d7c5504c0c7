package ecds

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
)

// DefaultMaxPluginBytes bounds a plugin download when the subscriber sets
// no bound: a misconfigured URL must not fill the host's disk or memory.
const DefaultMaxPluginBytes = 64 << 20

// fetchError is a fetch refused or failed. Its message goes back to the
// control plane in the NACK, so it is made only of what the control plane
// sent (the URL) and the host's own words: never the fetched bytes, a
// server's status text or headers, nor the digest of unverified bytes.
// Any of those would turn a NACK into an oracle on whatever the URL
// reached. The detail stays in the host's log.
type fetchError struct {
	url    string
	reason string
}

func (e *fetchError) Error() string { return "GET " + e.url + ": " + e.reason }

// fetch returns the path of a local file holding p's bytes: the cached one
// if it still hashes to p.SHA256, or a fresh download that does. Nothing
// unverified is ever left under a plugin's name.
func (s *Subscriber) fetch(ctx context.Context, p PluginRef) (string, error) {
	if err := os.MkdirAll(s.CacheDir, 0o700); err != nil {
		return "", err
	}
	dst := filepath.Join(s.CacheDir, p.SHA256+".wasm")
	if h, err := hashFile(dst); err == nil && h == p.SHA256 {
		return dst, nil
	}
	refuse := func(reason string, detail error) (string, error) {
		if detail != nil {
			s.Log.Warn("xds: plugin fetch failed", "url", p.URL, "reason", reason, "error", detail)
		}
		return "", &fetchError{url: p.URL, reason: reason}
	}
	u, err := url.Parse(p.URL)
	if err != nil {
		return refuse("not a URL", nil)
	}
	client := s.clientFor(u)
	if client == nil {
		return refuse(errOrigin.Error(), nil)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return refuse("not a URL", nil)
	}
	resp, err := client.Do(req)
	if err != nil {
		return refuse("request failed (the host's log has the detail)", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return refuse("redirects are not followed (status "+strconv.Itoa(resp.StatusCode)+")", nil)
	case resp.StatusCode != http.StatusOK:
		return refuse("status "+strconv.Itoa(resp.StatusCode), nil)
	case resp.ContentLength > s.maxBytes():
		return refuse(fmt.Sprintf("larger than %d bytes", s.maxBytes()), nil)
	}
	tmp, err := os.CreateTemp(s.CacheDir, ".fetch-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, s.maxBytes()+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return refuse("reading the body failed (the host's log has the detail)", err)
	case n > s.maxBytes():
		return refuse(fmt.Sprintf("larger than %d bytes", s.maxBytes()), nil)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != p.SHA256 {
		return refuse("the bytes do not match the sha256 they were published with", errors.New("sha256 "+got))
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", err
	}
	return dst, nil
}

func (s *Subscriber) maxBytes() int64 {
	if s.MaxPluginBytes > 0 {
		return s.MaxPluginBytes
	}
	return DefaultMaxPluginBytes
}

// clientFor is the client that may fetch u, or nil when u is under no
// allowed origin. The control plane's own plugin server (its ADS host name,
// any port) is reached with the ADS TLS configuration, client certificate
// included; configured origins with s.HTTP. Neither follows redirects: a
// redirect would leave the origin that was checked.
func (s *Subscriber) clientFor(u *url.URL) *http.Client {
	if s.plane.host != "" && s.plane.contains(u) {
		return s.planeHTTP
	}
	for _, o := range s.origins {
		if o.contains(u) {
			return s.originHTTP
		}
	}
	return nil
}

func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
