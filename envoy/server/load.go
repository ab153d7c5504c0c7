package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/runedge/runedge/envoy/internal/gateway"
	"github.com/runedge/runedge/envoy/internal/translate"
)

// reload builds snapshots from the gateway file and serves them. On any
// error the snapshot being served stays: nodes never see a half-checked
// configuration.
func (s *Server) reload(ctx context.Context) error {
	f, err := gateway.Load(s.cfg.GatewayFile)
	if err != nil {
		return err
	}
	s.setWatched(pluginFiles(f))
	g, err := translate.Build(f, s.publish)
	if err != nil {
		return fmt.Errorf("gateway %s: %w", s.cfg.GatewayFile, err)
	}
	res, err := translate.Translate(g)
	if err != nil {
		return fmt.Errorf("gateway %s: %w", s.cfg.GatewayFile, err)
	}
	snaps, err := newSnapshots(res)
	if err != nil {
		return fmt.Errorf("gateway %s: %w", s.cfg.GatewayFile, err)
	}
	// Only New and then the watch goroutine reload, one at a time; mu
	// guards version against readers, not reloads against each other.
	previous := s.Version()
	if snaps.version == previous {
		return nil
	}
	// The version is recorded before the snapshots go out: SetSnapshot
	// answers waiting nodes at once, and a node must never hold (or ACK) a
	// version that Version and /status do not report yet.
	s.setVersion(snaps.version)
	for group, snap := range map[string]*snapshot{proxyGroup: snaps.proxy, clientGroup: snaps.client} {
		if err := s.cache.SetSnapshot(ctx, group, snap); err != nil {
			s.setVersion(previous)
			return fmt.Errorf("serving version %s: %w", snaps.version, err)
		}
	}
	s.log.Info("serving gateway", "file", s.cfg.GatewayFile, "version", snaps.version, "previous", previous,
		"listeners", len(res.Listeners), "clusters", len(res.Clusters), "chains", len(res.Extensions))
	return nil
}

// publish puts a plugin into the store hosts fetch from. A signature
// file beside the plugin (<path>.sig, see plugins/signature) is passed on
// as it is: the control plane does not sign, whoever released the plugin
// did, and the hosts check it.
func (s *Server) publish(path string) (translate.Plugin, error) {
	h, err := s.cfg.Store.Put(path)
	if err != nil {
		return translate.Plugin{}, err
	}
	p := translate.Plugin{SHA256: h, URL: PluginURL(s.cfg.PluginsURL, h)}
	switch sig, err := os.ReadFile(path + SignatureSuffix); {
	case err == nil:
		p.Signature = strings.TrimSpace(string(sig))
	case !errors.Is(err, fs.ErrNotExist):
		return translate.Plugin{}, err
	}
	return p, nil
}

// SignatureSuffix names a plugin's signature file: openai.wasm.sig.
const SignatureSuffix = ".sig"

// pluginFiles are the files the chains of f refer to; a change to one of
// them is a change of configuration, like a change to f.
// Sorted, so that the watch's fingerprint of them is stable.
func pluginFiles(f *gateway.File) []string {
	var out []string
	for _, ch := range f.Chains {
		for _, p := range []string{f.Path(ch.MapRequest), f.Path(ch.Translate)} {
			out = append(out, p, p+SignatureSuffix)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (s *Server) setVersion(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version = v
}

func (s *Server) setWatched(files []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watched = files
}
