package runtime

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tetratelabs/wazero"
)

// Load reads, compiles and checks the plugin at path. It instantiates one
// instance, checks the ABI version and hook exports, and runs the plugin's
// self-test when it has one, so that a plugin that loads is known to work.
// Errors name the file and what is wrong with it.
func (e *Engine) Load(ctx context.Context, path string, opts Options) (*Plugin, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load plugin: %w", err)
	}
	p, err := e.load(ctx, strings.TrimSuffix(filepath.Base(path), ".wasm"), wasm, opts)
	if err != nil {
		return nil, fmt.Errorf("load plugin %s: %w", path, err)
	}
	return p, nil
}

// LoadBytes is Load for a plugin already in memory; name is its default
// Options.Name.
func (e *Engine) LoadBytes(ctx context.Context, name string, wasm []byte, opts Options) (*Plugin, error) {
	p, err := e.load(ctx, name, wasm, opts)
	if err != nil {
		return nil, fmt.Errorf("load plugin %s: %w", name, err)
	}
	return p, nil
}

func (e *Engine) load(ctx context.Context, name string, wasm []byte, opts Options) (*Plugin, error) {
	opts, err := opts.withDefaults(name)
	if err != nil {
		return nil, err
	}
	rt, err := e.runtime(ctx, opts.MaxMemoryPages)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(wasm)
	cm, release, err := e.compile(ctx, rt, compiledKey{sum: sum, pages: opts.MaxMemoryPages}, wasm)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	if err := checkExports(cm); err != nil {
		release()
		return nil, err
	}

	// Every instance gets real clocks and randomness: wazero's defaults are
	// deterministic fakes that would surprise a plugin reading the time.
	// A wasip1 reactor is initialised by _initialize, not _start, and an
	// empty name lets one runtime hold many instances of the module.
	config := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions("_initialize").
		WithSysWalltime().
		WithSysNanotime().
		WithRandSource(rand.Reader)
	p := &Plugin{name: opts.Name, sha256: hex.EncodeToString(sum[:]), opts: opts}
	create := func(ctx context.Context) (*instance, error) {
		inst, err := instantiate(ctx, rt, cm, config)
		if err != nil {
			return nil, fmt.Errorf("instantiate: %w", err)
		}
		return inst, nil
	}
	p.pool = newPool(opts.PoolSize, create, release)

	if err := p.pool.wait(ctx); err != nil {
		p.pool.close(ctx)
		return nil, err
	}
	inst, err := p.pool.take(ctx)
	if err != nil {
		p.pool.close(ctx)
		return nil, err
	}
	if p.hooks, err = checkInstance(ctx, inst); err != nil {
		p.pool.discard(ctx, inst)
		p.pool.close(ctx)
		return nil, err
	}
	p.pool.put(ctx, inst)
	return p, nil
}

// checkExports checks that the compiled module has the exports every plugin
// needs, with the right types, before anything is run.
func checkExports(cm wazero.CompiledModule) error {
	if _, ok := cm.ExportedMemories()[exportMemory]; !ok {
		return fmt.Errorf("missing required export %q (linear memory)", exportMemory)
	}
	funcs := cm.ExportedFunctions()
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(requiredExports)) {
		def, ok := funcs[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("missing required export %s", name))
			continue
		}
		if msg := requiredExports[name].mismatch(def); msg != "" {
			problems = append(problems, fmt.Sprintf("export %s %s", name, msg))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(hookExports)) {
		if def, ok := funcs[name]; ok {
			if msg := hookExports[name].mismatch(def); msg != "" {
				problems = append(problems, fmt.Sprintf("export %s %s", name, msg))
			}
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// checkInstance checks the ABI version and hook bitmap of a fresh instance
// and runs its self-test. It returns the hook bitmap.
func checkInstance(ctx context.Context, inst *instance) (int32, error) {
	version, err := inst.callI32(ctx, exportABIVersion)
	if err != nil {
		return 0, err
	}
	if version != abiVersion {
		return 0, fmt.Errorf("plugin implements ABI version %d; this host implements version %d", version, abiVersion)
	}
	hooks, err := inst.callI32(ctx, exportHooks)
	if err != nil {
		return 0, err
	}
	if unknown := hooks &^ knownHookBits; unknown != 0 {
		return 0, fmt.Errorf("%s sets unknown bits %#x (this host knows %#x)", exportHooks, unknown, knownHookBits)
	}
	if hooks&(bitMapRequest|bitMapResult) == 0 {
		return 0, fmt.Errorf("%s reports no mapping hook (%s or %s)", exportHooks, exportMapRequest, exportMapResult)
	}
	for h := range Hook(hookCount) {
		if hooks&h.bit() != 0 && inst.hooks[h] == nil {
			return 0, fmt.Errorf("%s reports %s but the module does not export it", exportHooks, h.export())
		}
	}
	if hooks&bitSelfTest == 0 {
		return hooks, nil
	}
	if inst.selfTest == nil {
		return 0, fmt.Errorf("%s reports %s but the module does not export it", exportHooks, exportSelfTest)
	}
	status, out, err := inst.runSelfTest(ctx)
	if err != nil {
		return 0, fmt.Errorf("self test: %w", err)
	}
	if status != statusOK {
		return 0, fmt.Errorf("self test failed (status %d): %s", status, truncate(out, maxGuestMessage))
	}
	return hooks, nil
}
