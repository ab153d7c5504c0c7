package server

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/plugins/plugintest"
)

var pieceRE = regexp.MustCompile(`\[(v\d)\]`)

// Swap the plugins of both endpoints 50 times while clients send streaming
// and non-streaming requests in parallel: no request fails, every reply is
// produced by one version throughout, and the retired versions' instances
// are closed.
func TestSwapUnderLoad(t *testing.T) {
	v1 := plugintest.Build(t, "./testdata/versioned/v1")
	v2 := plugintest.Build(t, "./testdata/versioned/v2")
	chains := func(p string) map[string]config.Chain {
		return map[string]config.Chain{config.ChainChat: {MapRequest: p, Translate: p},
			config.ChainResponses: {MapRequest: p, Translate: p}}
	}
	h := start(t, func(c *config.Config) {
		c.Chains = chains(v1)
		c.Plugins.StreamWindow = config.Dur(0)
	})
	ctx := context.Background()

	var stop atomic.Bool
	var requests, failures atomic.Int64
	seen := sync.Map{} // versions that served replies
	var wg sync.WaitGroup
	fail := func(format string, args ...any) {
		failures.Add(1)
		t.Errorf(format, args...)
	}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				requests.Add(1)
				switch (w + i) % 3 {
				case 0: // chat, whole
					res := h.do("POST", "/v1/chat/completions", chatBody)
					b := body(t, res)
					stamp := gjson.GetBytes(b, "system_fingerprint").Str
					if res.StatusCode != 200 || !oneVersion(stamp) {
						fail("chat: %d stamp %q: %s", res.StatusCode, stamp, b)
						continue
					}
					seen.Store(stamp, true)
				case 1: // responses, streamed
					res := h.do("POST", "/v1/responses", `{"model":"service","stream":true,"input":"one two three"}`)
					if res.StatusCode != 200 {
						fail("responses stream: %d %s", res.StatusCode, body(t, res))
						continue
					}
					evs := readEvents(t, res.Body)
					res.Body.Close()
					versions := map[string]bool{}
					var final string
					for _, e := range evs {
						switch e.Event {
						case "response.output_text.delta":
							for _, m := range pieceRE.FindAllStringSubmatch(gjson.Get(e.Data, "delta").Str, -1) {
								versions[m[1]] = true
							}
						case "response.completed":
							final = gjson.Get(e.Data, "response.metadata.stamp").Str
						case "error":
							fail("stream error event: %s", e.Data)
						}
					}
					if !oneVersion(final) || len(versions) != 1 || !versions[strings.Split(final, "/")[0]] {
						fail("mixed stream: pieces %v, final %q", versions, final)
					}
				case 2: // chat, streamed
					res := h.do("POST", "/v1/chat/completions", `{"model":"service","stream":true,"messages":[{"role":"user","content":"a b c"}]}`)
					evs := readEvents(t, res.Body)
					res.Body.Close()
					versions := map[string]bool{}
					for _, e := range evs {
						for _, m := range pieceRE.FindAllStringSubmatch(gjson.Get(e.Data, "choices.0.delta.content").Str, -1) {
							versions[m[1]] = true
						}
					}
					if res.StatusCode != 200 || len(versions) != 1 || evs[len(evs)-1].Data != "[DONE]" {
						fail("chat stream: %d versions %v", res.StatusCode, versions)
					}
				}
			}
		}(w)
	}

	var retired []*held
	for i := 0; i < 50; i++ {
		before := h.srv.gen.Load()
		next := v2
		if i%2 == 1 {
			next = v1
		}
		if err := h.srv.ApplyChains(ctx, chains(next)); err != nil {
			t.Fatalf("swap %d: %v", i, err)
		}
		for _, hd := range before.stages {
			retired = append(retired, hd)
		}
	}
	stop.Store(true)
	wg.Wait()

	if failures.Load() > 0 {
		t.Fatalf("%d of %d requests failed or mixed versions", failures.Load(), requests.Load())
	}
	if requests.Load() < 20 {
		t.Fatalf("only %d requests ran during the swaps", requests.Load())
	}
	for _, v := range []string{"v1/v1", "v2/v2"} {
		if _, ok := seen.Load(v); !ok {
			t.Errorf("no reply came from %s", v)
		}
	}
	checkRetired(t, h, retired)
	t.Logf("%d requests during 50 swaps", requests.Load())
}

// checkRetired fails t if a plugin of a retired generation that the
// current one does not hold is still held or still has instances.
func checkRetired(t *testing.T, h *harness, retired []*held) {
	t.Helper()
	current := map[*held]bool{}
	for _, hd := range h.srv.gen.Load().stages {
		current[hd] = true
	}
	for _, hd := range retired {
		if current[hd] {
			continue
		}
		if n := hd.gens.Load(); n != 0 {
			t.Fatalf("a retired plugin (%s) is still held by %d generations", hd.path, n)
		}
		if st := hd.p.Stats(); st.Instances != 0 {
			t.Fatalf("a retired plugin (%s) still has %d instances", hd.path, st.Instances)
		}
	}
}

// oneVersion reports whether a "req/result" stamp names one version.
func oneVersion(stamp string) bool {
	a, b, ok := strings.Cut(stamp, "/")
	return ok && a == b && a != ""
}

// A swap that fails (a file that is not a plugin, a plugin failing its
// self-test) leaves the old version serving and says why.
func TestFailedSwapKeepsServing(t *testing.T) {
	h := start(t, nil)
	before := h.srv.Plugins()
	bad := t.TempDir() + "/bad.wasm"
	if err := os.WriteFile(bad, []byte("\x00asm not really"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := h.srv.SwapPlugin(context.Background(), "chat.completions/translate", bad)
	if err == nil || !strings.Contains(err.Error(), "previous version keeps serving") {
		t.Fatalf("bad swap: %v", err)
	}
	if after := h.srv.Plugins(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("plugins changed after a failed swap:\n%v\n%v", before, after)
	}
	if res := h.do("POST", "/v1/chat/completions", chatBody); res.StatusCode != 200 {
		t.Fatalf("after a failed swap: %d %s", res.StatusCode, body(t, res))
	}
	if err := h.srv.SwapPlugin(context.Background(), "embeddings/translate", bad); err == nil {
		t.Fatal("unknown stage accepted")
	}
}
