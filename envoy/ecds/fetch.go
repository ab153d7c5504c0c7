package ecds

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
)

// MaxPluginBytes bounds a plugin download: a misconfigured URL must not
// fill the host's disk.
const MaxPluginBytes = 256 << 20

// fetch returns the path of a local file holding p's bytes: the cached one
// if it still hashes to p.SHA256, or a fresh download that does. Nothing
// unverified is ever left under a plugin's name.
func (s *Subscriber) fetch(ctx context.Context, p PluginRef) (string, error) {
	if err := os.MkdirAll(s.CacheDir, 0o755); err != nil {
		return "", err
	}
	dst := filepath.Join(s.CacheDir, p.SHA256+".wasm")
	if h, err := hashFile(dst); err == nil && h == p.SHA256 {
		return dst, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return "", err
	}
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", p.URL, resp.Status)
	}
	tmp, err := os.CreateTemp(s.CacheDir, ".fetch-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, MaxPluginBytes+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return "", fmt.Errorf("GET %s: %w", p.URL, err)
	case n > MaxPluginBytes:
		return "", fmt.Errorf("GET %s: larger than %d bytes", p.URL, MaxPluginBytes)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != p.SHA256 {
		return "", fmt.Errorf("GET %s: sha256 is %s, want %s", p.URL, got, p.SHA256)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", err
	}
	return dst, nil
}

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
