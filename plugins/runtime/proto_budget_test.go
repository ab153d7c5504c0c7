package runtime

import (
	"context"
	"crypto/rand"
	"os"
	"testing"
	"time"

	"github.com/runedge/runedge/plugins/plugintest"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

func protoInstance(b *testing.B, closeOnDone bool) *instance {
	ctx := context.Background()
	cache, _ := sharedCache(plugintest.CacheDir(b))
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache).WithMemoryLimitPages(1024).WithCloseOnContextDone(closeOnDone))
	b.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	wasm, err := os.ReadFile(plugintest.Build(b, "./testdata/echo"))
	if err != nil {
		b.Fatal(err)
	}
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		b.Fatal(err)
	}
	config := wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize").WithSysWalltime().WithSysNanotime().WithRandSource(rand.Reader)
	inst, err := instantiate(ctx, rt, cm, config)
	if err != nil {
		b.Fatal(err)
	}
	return inst
}

func protoInputs() map[string]struct {
	h  Hook
	in []byte
} {
	j7 := benchInput(7000)
	j7 = append(append([]byte("json:["), j7[:len(j7)-1]...), ']')
	return map[string]struct {
		h  Hook
		in []byte
	}{
		"echo100B": {MapRequest, benchInput(100)},
		"echo7KB":  {MapRequest, benchInput(7000)},
		"json7KB":  {MapResult, j7},
		"json100B": {MapResult, []byte(`json:{"model":"m","messages":[{"role":"user","content":"hello there"}],"stream":true}`)},
	}
}

func BenchmarkProto(b *testing.B) {
	for _, name := range []string{"echo100B", "json100B", "echo7KB", "json7KB"} {
		in := protoInputs()[name]
		b.Run("none/"+name, func(b *testing.B) {
			inst := protoInstance(b, false)
			ctx := context.Background()
			for b.Loop() {
				if _, _, err := inst.runHook(ctx, in.h, in.in); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("checksNoDeadline/"+name, func(b *testing.B) {
			inst := protoInstance(b, true)
			ctx := context.Background()
			for b.Loop() {
				if _, _, err := inst.runHook(ctx, in.h, in.in); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("ctxTimeout/"+name, func(b *testing.B) {
			inst := protoInstance(b, true)
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
				if _, _, err := inst.runHook(ctx, in.h, in.in); err != nil {
					b.Fatal(err)
				}
				cancel()
			}
		})
		b.Run("afterFunc/"+name, func(b *testing.B) {
			inst := protoInstance(b, true)
			ctx := context.WithoutCancel(context.Background())
			for b.Loop() {
				t := time.AfterFunc(250*time.Millisecond, func() { inst.mod.CloseWithExitCode(ctx, 9) })
				if _, _, err := inst.runHook(ctx, in.h, in.in); err != nil {
					b.Fatal(err)
				}
				t.Stop()
			}
		})
	}
}
