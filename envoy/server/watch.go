package server

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"time"
)

// watch reloads the gateway file whenever it, or a plugin file it refers
// to, changes. A change that does not load is logged and otherwise
// ignored: the last good snapshot keeps being served, and the same broken
// content is not reported again on every tick.
func (s *Server) watch(ctx context.Context) {
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	last := s.fingerprint()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fp := s.fingerprint()
		if fp == last {
			continue
		}
		last = fp
		s.log.Debug("gateway or plugin file changed; reloading", "file", s.cfg.GatewayFile)
		if err := s.reload(ctx); err != nil {
			s.log.Error("gateway file rejected; still serving the last good version",
				"file", s.cfg.GatewayFile, "version", s.Version(), "error", err)
		}
	}
}

// fingerprint summarizes what a reload would read: the gateway file's
// bytes, and the size and modification time of the plugin files it names
// (hashing megabytes of WebAssembly every tick would be wasteful; a
// rebuilt plugin gets a new modification time).
func (s *Server) fingerprint() string {
	h := sha256.New()
	b, err := os.ReadFile(s.cfg.GatewayFile)
	if err != nil {
		fmt.Fprintf(h, "error %v\n", err)
	}
	h.Write(b)
	s.mu.Lock()
	files := s.watched
	s.mu.Unlock()
	for _, p := range files {
		if fi, err := os.Stat(p); err != nil {
			fmt.Fprintf(h, "%s: %v\n", p, err)
		} else {
			fmt.Fprintf(h, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return string(h.Sum(nil))
}
