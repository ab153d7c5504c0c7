package server_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/runedge/runedge/envoy/ecds"
	"github.com/runedge/runedge/internal/logbuf"
	"github.com/runedge/runedge/plugins/signature"
)

// chainsGateway gives each endpoint a different plugin (the file contents
// are stand-ins: the control plane serves bytes, it does not load them),
// so that each chain's references have digests of their own.
const chainsGateway = `
chains:
  chat.completions:
    map_request: plugins/openai.wasm
    translate: plugins/openai.wasm
  responses:
    map_request: plugins/custom.wasm
    translate: plugins/custom.wasm
`

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// host is a subscriber whose apply checks what it is given the way a real
// host must rely on: every plugin file on disk hashes to its reference.
type host struct {
	cacheDir string
	logs     *logbuf.Buffer
	applied  chan map[string]ecds.ChainRef
	fail     atomic.Pointer[error]
	calls    atomic.Int32
}

func subscribe(t *testing.T, p *plane, nodeID string, opts ...func(*ecds.Subscriber)) *host {
	t.Helper()
	return subscribeTo(t, p.pki, p.ads, nodeID, opts...)
}

// subscribeTo subscribes a node with the client certificate of ca; opts
// adjust the subscriber.
func subscribeTo(t *testing.T, ca *pki, addr, nodeID string, opts ...func(*ecds.Subscriber)) *host {
	t.Helper()
	h := &host{applied: make(chan map[string]ecds.ChainRef, 8), logs: &logbuf.Buffer{}}
	h.cacheDir = filepath.Join(t.TempDir(), "cache")
	s := &ecds.Subscriber{Addr: addr, NodeID: nodeID, CacheDir: h.cacheDir, TLS: ca.client(t),
		Log: slog.New(slog.NewTextHandler(h.logs, nil))}
	for _, o := range opts {
		o(s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.Run(ctx, func(ctx context.Context, chains map[string]ecds.ChainRef) error {
			h.calls.Add(1)
			if err := h.fail.Load(); err != nil {
				return *err
			}
			for ep, c := range chains {
				for _, p := range []ecds.PluginRef{c.MapRequest, c.Translate} {
					b, err := os.ReadFile(p.Path)
					if err != nil {
						t.Errorf("%s: %v", ep, err)
					} else if sha(string(b)) != p.SHA256 {
						t.Errorf("%s: %s holds bytes of sha256 %s, reference says %s", ep, p.Path, sha(string(b)), p.SHA256)
					}
				}
			}
			h.applied <- chains
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return h
}

func (h *host) next(t *testing.T) map[string]ecds.ChainRef {
	t.Helper()
	select {
	case c := <-h.applied:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no chains applied")
		return nil
	}
}

// TestECDSTwoHosts: two hosts subscribed to one control plane get every
// chain with verified plugin bytes; changing a plugin reference in the
// gateway file, and rebuilding a plugin in place, both reach both hosts.
func TestECDSTwoHosts(t *testing.T) {
	p := startPlane(t, map[string]string{
		"gateway.yaml":             chainsGateway,
		"plugins/openai.wasm":      "openai v1",
		"plugins/custom.wasm":      "custom v1",
		"plugins/openai-next.wasm": "openai v2",
	})
	hosts := []*host{subscribe(t, p, "host-1"), subscribe(t, p, "host-2")}
	for i, h := range hosts {
		c := h.next(t)
		if c["chat.completions"].Translate.SHA256 != sha("openai v1") || c["responses"].MapRequest.SHA256 != sha("custom v1") {
			t.Fatalf("host %d: first chains %+v", i+1, c)
		}
	}

	p.edit(t, "gateway.yaml", strings.Replace(chainsGateway, "translate: plugins/openai.wasm", "translate: plugins/openai-next.wasm", 1))
	for i, h := range hosts {
		c := h.next(t)
		if c["chat.completions"].Translate.SHA256 != sha("openai v2") || c["chat.completions"].MapRequest.SHA256 != sha("openai v1") {
			t.Fatalf("host %d: after the reference changed: %+v", i+1, c["chat.completions"])
		}
	}

	// A plugin rebuilt under the same name is a change too.
	p.edit(t, "plugins/custom.wasm", "custom v2")
	for i, h := range hosts {
		if c := h.next(t); c["responses"].Translate.SHA256 != sha("custom v2") {
			t.Fatalf("host %d: after the plugin was rebuilt: %+v", i+1, c["responses"])
		}
	}
	waitFor(t, 5*time.Second, "both hosts to ACK", func() bool {
		st := p.srv.Status().Nodes
		return st["host-1"].Types["TypedExtensionConfig"].Acked == p.srv.Version() && st["host-2"].Types["TypedExtensionConfig"].Acked == p.srv.Version()
	})
}

// TestECDSRefusals: a host NACKs chains it cannot fetch (without calling
// apply) and chains its apply refuses, each time with its reason in the
// control plane's status, and applies the next good version.
func TestECDSRefusals(t *testing.T) {
	p := startPlane(t, map[string]string{
		"gateway.yaml":        chainsGateway,
		"plugins/openai.wasm": "openai v1",
		"plugins/custom.wasm": "custom v1",
	})
	status := func() (acked, rejected, msg string) {
		s := p.srv.Status().Nodes["host-1"].Types["TypedExtensionConfig"]
		return s.Acked, s.Rejected, s.Error
	}
	// The store lost a plugin: the host cannot fetch it.
	if err := os.Remove(filepath.Join(p.dir, "store", sha("openai v1"))); err != nil {
		t.Fatal(err)
	}
	h := subscribe(t, p, "host-1")
	waitFor(t, 10*time.Second, "a NACK for the missing plugin", func() bool {
		_, rejected, msg := status()
		return rejected == p.srv.Version() && strings.Contains(msg, "404")
	})
	if n := h.calls.Load(); n != 0 {
		t.Fatalf("apply was called %d times with a plugin that could not be fetched", n)
	}

	refuse := errors.New("plugin failed its self-test")
	h.fail.Store(&refuse)
	p.edit(t, "plugins/openai.wasm", "openai v2")
	waitFor(t, 10*time.Second, "a NACK from apply", func() bool {
		_, rejected, msg := status()
		return rejected == p.srv.Version() && strings.Contains(msg, "plugin failed its self-test")
	})

	h.fail.Store(nil)
	p.edit(t, "plugins/openai.wasm", "openai v3")
	if c := h.next(t); c["chat.completions"].MapRequest.SHA256 != sha("openai v3") {
		t.Fatalf("applied %+v", c["chat.completions"])
	}
	waitFor(t, 5*time.Second, "the ACK", func() bool {
		acked, rejected, _ := status()
		return acked == p.srv.Version() && rejected == ""
	})
}

// TestECDSReconnects: a host started before its control plane keeps
// trying, and applies the chains once the control plane is up.
func TestECDSReconnects(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ca := newPKI(t)
	h := subscribeTo(t, ca, addr, "host-early")
	waitFor(t, 5*time.Second, "the host to fail to connect", func() bool { return h.logs.Contains("reconnecting") })
	p := startPlaneAt(t, ca, addr, map[string]string{
		"gateway.yaml":        chainsGateway,
		"plugins/openai.wasm": "openai v1",
		"plugins/custom.wasm": "custom v1",
	})
	if c := h.next(t); c["chat.completions"].MapRequest.SHA256 != sha("openai v1") {
		t.Fatalf("applied %+v", c)
	}
	waitFor(t, 5*time.Second, "the ACK", func() bool {
		return p.srv.Status().Nodes["host-early"].Types["TypedExtensionConfig"].Acked == p.srv.Version()
	})
}

// TestECDSSignedPlugins: a host with trusted keys applies a chain only
// when every plugin carries a signature (a .sig file beside it in the
// control plane's directory) from one of them; an unsigned plugin or one
// signed with another key is NACKed without being fetched.
func TestECDSSignedPlugins(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	sign := func(key ed25519.PrivateKey, body string) string {
		s, err := signature.Sign(key, sha(body))
		if err != nil {
			t.Fatal(err)
		}
		return s + "\n"
	}
	p := startPlane(t, map[string]string{
		"gateway.yaml":            chainsGateway,
		"plugins/openai.wasm":     "openai v1",
		"plugins/openai.wasm.sig": sign(priv, "openai v1"),
		"plugins/custom.wasm":     "custom v1",
	})
	nacked := func(want string) func() bool {
		return func() bool {
			s := p.srv.Status().Nodes["host-1"].Types["TypedExtensionConfig"]
			return s.Rejected == p.srv.Version() && strings.Contains(s.Error, want)
		}
	}
	h := subscribe(t, p, "host-1", func(s *ecds.Subscriber) { s.TrustedKeys = []ed25519.PublicKey{pub} })
	waitFor(t, 10*time.Second, "a NACK for the unsigned plugin", nacked("runedge.chain.responses: map_request: plugin "+sha("custom v1")+": not signed by a trusted key"))

	p.edit(t, "plugins/custom.wasm.sig", sign(otherPriv, "custom v1"))
	waitFor(t, 10*time.Second, "a NACK for the plugin signed with another key", nacked("not signed by a trusted key"))
	if n := h.calls.Load(); n != 0 {
		t.Fatalf("apply was called %d times with untrusted plugins", n)
	}
	if entries, _ := os.ReadDir(filepath.Join(h.cacheDir)); len(entries) != 0 {
		t.Fatalf("untrusted chains were fetched: %d files in the cache", len(entries))
	}

	p.edit(t, "plugins/custom.wasm.sig", sign(priv, "custom v1"))
	if c := h.next(t); c["responses"].MapRequest.SHA256 != sha("custom v1") {
		t.Fatalf("applied %+v", c)
	}
}

// TestTypeURLIsGoControlPlanes: hosts subscribe with ecds.TypeURL, a
// constant of their own so that they need not link go-control-plane's
// resource package; it must stay the type the control plane serves chains
// as.
func TestTypeURLIsGoControlPlanes(t *testing.T) {
	if ecds.TypeURL != resource.ExtensionConfigType {
		t.Fatalf("ecds.TypeURL %q, the control plane serves chains as %q", ecds.TypeURL, resource.ExtensionConfigType)
	}
}
