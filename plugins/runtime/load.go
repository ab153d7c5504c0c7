package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/runedge/runedge/plugins/abi"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
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

	// Every instance gets real clocks and randomness (wazero's defaults are
	// deterministic fakes that would surprise a plugin reading the time),
	// each charged against the running call's budget: instantiate adds them
	// (hostcalls.go). A wasip1 reactor is initialised by _initialize,
	// not _start, and an empty name lets one runtime hold many instances of
	// the module.
	config := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions("_initialize")
	p := &Plugin{name: opts.Name, sha256: hex.EncodeToString(sum[:]), opts: opts}
	setup := opts.setupBudget()
	create := func(context.Context) (*instance, error) {
		inst, err := instantiate(rt, cm, config, setup)
		if err != nil {
			return nil, fmt.Errorf("instantiate: %w", err)
		}
		return inst, nil
	}
	drained := func() {
		release()
		e.metrics.forget(p)
	}
	p.pool = newPool(opts.PoolSize, create, drained)

	if err := p.pool.wait(ctx); err != nil {
		p.pool.close(ctx)
		return nil, err
	}
	inst, err := p.pool.take(ctx)
	if err != nil {
		p.pool.close(ctx)
		return nil, err
	}
	if p.hooks, p.version, err = checkInstance(inst, setup); err != nil {
		p.pool.discard(ctx, inst)
		p.pool.close(ctx)
		return nil, err
	}
	p.pool.put(ctx, inst)
	p.metrics = e.metrics.track(p)
	return p, nil
}

// checkExports checks that the compiled module has the exports every plugin
// needs, with the right types, before anything is run.
func checkExports(cm wazero.CompiledModule) error {
	if _, ok := cm.ExportedMemories()[abi.ExportMemory]; !ok {
		return fmt.Errorf("missing required export %q (linear memory)", abi.ExportMemory)
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
	for _, name := range slices.Sorted(maps.Keys(optionalExports)) {
		if def, ok := funcs[name]; ok {
			if msg := optionalExports[name].mismatch(def); msg != "" {
				problems = append(problems, fmt.Sprintf("export %s %s", name, msg))
			}
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// checkInstance checks the ABI version and hook bitmap of a fresh instance,
// reads its version and runs its self-test, each call within budget d. It
// returns the hook bitmap and the version.
func checkInstance(inst *instance, d time.Duration) (int32, string, error) {
	reported, err := inst.callU64(abi.ExportABIVersion, d)
	if err != nil {
		return 0, "", err
	}
	if v := api.DecodeI32(reported); v != abi.Version {
		return 0, "", fmt.Errorf("plugin implements ABI version %d; this host implements version %d", v, abi.Version)
	}
	bits, err := inst.callU64(abi.ExportHooks, d)
	if err != nil {
		return 0, "", err
	}
	hooks := api.DecodeI32(bits)
	if unknown := hooks &^ abi.KnownHooks; unknown != 0 {
		return 0, "", fmt.Errorf("%s sets unknown bits %#x (this host knows %#x)", abi.ExportHooks, unknown, abi.KnownHooks)
	}
	if hooks&abi.MappingHooks == 0 {
		return 0, "", fmt.Errorf("%s reports no mapping hook (%s, %s or %s)", abi.ExportHooks, abi.ExportMapRequest, abi.ExportMapResult, abi.ExportMapStream)
	}
	for h := range Hook(hookCount) {
		if hooks&h.bit() != 0 && inst.hooks[h] == nil {
			return 0, "", fmt.Errorf("%s reports %s but the module does not export it", abi.ExportHooks, h.export())
		}
	}
	version, err := readVersion(inst, d)
	if err != nil {
		return 0, "", err
	}
	if hooks&abi.HookSelfTest == 0 {
		return hooks, version, nil
	}
	if inst.selfTest == nil {
		return 0, "", fmt.Errorf("%s reports %s but the module does not export it", abi.ExportHooks, abi.ExportSelfTest)
	}
	status, out, err := inst.runSelfTest(d)
	if err != nil {
		return 0, "", fmt.Errorf("self test: %w", err)
	}
	if status != abi.StatusOK {
		return 0, "", fmt.Errorf("self test failed (status %d): %s", status, truncate(out, maxGuestMessage))
	}
	return hooks, version, nil
}

// maxVersionLen caps the length of a plugin's version string.
const maxVersionLen = 64

// readVersion returns the version the plugin declares with runedge_version,
// or "" when it does not export it or returns an empty string. A version
// that is not short, printable UTF-8 fails the load: it ends up in listings
// and logs.
func readVersion(inst *instance, d time.Duration) (string, error) {
	if inst.mod.ExportedFunction(abi.ExportVersion) == nil {
		return "", nil
	}
	v, err := inst.callU64(abi.ExportVersion, d)
	if err != nil {
		return "", err
	}
	b, err := inst.readPtrLen(abi.ExportVersion, v)
	if err != nil {
		return "", err
	}
	if len(b) > maxVersionLen {
		return "", fmt.Errorf("%s returned %d bytes, more than the %d allowed", abi.ExportVersion, len(b), maxVersionLen)
	}
	if !utf8.Valid(b) || strings.ContainsFunc(string(b), func(r rune) bool { return !unicode.IsPrint(r) }) {
		return "", fmt.Errorf("%s returned %q, which is not printable UTF-8", abi.ExportVersion, b)
	}
	return string(b), nil
}
