package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/plugins/native"
	"github.com/runedge/runedge/plugins/runtime"
)

// Stage names of the mapping stages, as used in stage keys
// ("chat.completions/translate") and by `runedge plugin swap`
// (internal/contract names them).
const (
	StageMapRequest = contract.StageMapRequest
	StageTranslate  = contract.StageTranslate
)

// held is a loaded plugin and the generations holding it. Successive
// generations share a plugin whose file did not change, so a swap of one
// stage leaves the others' instance pools warm; the plugin is closed when the
// last generation holding it is released.
type held struct {
	p     *runtime.Plugin
	path  string
	since time.Time
	gens  atomic.Int32
}

func (h *held) drop(ctx context.Context) {
	if h.gens.Add(-1) == 0 {
		h.p.Close(ctx)
	}
}

// loader loads the plugins of one new generation, reusing the current
// generation's plugin for a file whose content is unchanged.
type loader struct {
	s    *Server
	ctx  context.Context
	cfg  *config.Config
	mine map[string]*held // by path, within the new generation
	// fresh counts the plugins loaded anew (not kept from the current
	// generation): each left compile garbage in the heap.
	fresh int
}

func (s *Server) loader(ctx context.Context, cfg *config.Config) *loader {
	return &loader{s: s, ctx: ctx, cfg: cfg, mine: map[string]*held{}}
}

func (l *loader) load(path string) (*held, error) {
	if path != native.Ref {
		path = l.cfg.Path(path)
	}
	if h := l.mine[path]; h != nil {
		return h, nil
	}
	if path == native.Ref {
		return l.builtin()
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("plugin %w (`make plugins` builds plugins/build/openai.wasm; %s is the built-in default, run natively)", err, native.Ref)
	}
	sum := sha256.Sum256(wasm)
	digest := hex.EncodeToString(sum[:])
	if cur := l.s.gen.Load(); cur != nil {
		for _, h := range cur.stages {
			if h.path == path && h.p.SHA256() == digest {
				h.gens.Add(1)
				l.mine[path] = h
				return h, nil
			}
		}
	}
	p, err := l.s.engine.LoadBytes(l.ctx, pluginName(path), wasm, runtime.Options{
		PoolSize:          l.cfg.Plugins.PoolSize,
		MaxMemoryPages:    l.cfg.Plugins.MaxMemoryPages,
		CallTimeout:       l.cfg.Plugins.CallTimeout.Std(),
		CallTimeoutPerMiB: l.cfg.Plugins.CallTimeoutPerMiB.Std(),
	})
	if err != nil {
		return nil, err
	}
	h := &held{p: p, path: path, since: time.Now()}
	h.gens.Store(1)
	l.mine[path] = h
	l.fresh++
	return h, nil
}

// builtin holds the built-in default mapping, run natively: kept from the
// current generation when it has it, so its "since" stays put. Nothing is
// compiled: the wasm build of the default is compiled only when a
// configuration or a swap names its file.
func (l *loader) builtin() (*held, error) {
	if cur := l.s.gen.Load(); cur != nil {
		for _, h := range cur.stages {
			if h.path == native.Ref {
				h.gens.Add(1)
				l.mine[native.Ref] = h
				return h, nil
			}
		}
	}
	p, err := native.Load(l.s.engine, runtime.Options{})
	if err != nil {
		return nil, err
	}
	h := &held{p: p, path: native.Ref, since: time.Now()}
	h.gens.Store(1)
	l.mine[native.Ref] = h
	return h, nil
}

// pluginName is a plugin's name in errors and metrics: its file name
// without .wasm; a content-addressed file is named by its digest's prefix.
func pluginName(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".wasm")
	if len(name) == 64 {
		return name[:12]
	}
	return name
}
