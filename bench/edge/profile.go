package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// What -profile saves of a runedge target: CPU profiles or execution
// traces, heap profiles, smaps and /metrics, from its admin listener.

// takeProfile writes a CPU profile (kind "profile") or an execution trace
// ("trace") of d taken from runedge's admin listener (GET
// /debug/pprof/<kind>) to path.
func takeProfile(admin, kind string, d time.Duration, path string) error {
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://%s/debug/pprof/%s?seconds=%d", admin, kind, max(1, int(d.Seconds()))), nil)
	req.Header.Set("Authorization", "Bearer "+benchToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return fmt.Errorf("GET /debug/pprof/%s: %s", kind, res.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// takeMemory writes runedge's heap profile (GET /debug/pprof/heap, for
// go tool pprof -sample_index=inuse_space) to base+".heap.pprof" and its
// /proc/<pid>/smaps_rollup, /proc/<pid>/status and the Go runtime's
// MemStats to base+".smaps": what the resident set holds while the load
// runs.
func takeMemory(admin string, pid int, base string) error {
	var out []byte
	for _, f := range []string{"smaps_rollup", "status"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, f))
		if err != nil {
			return err
		}
		out = append(append(out, "== "+f+"\n"...), b...)
	}
	heap, err := adminGet(admin, "/debug/pprof/heap")
	if err != nil {
		return err
	}
	// The text form ends with the runtime's MemStats ("# HeapSys = ...").
	text, err := adminGet(admin, "/debug/pprof/heap?debug=1")
	if err != nil {
		return err
	}
	out = append(out, "== MemStats\n"...)
	for _, l := range strings.SplitAfter(string(text), "\n") {
		if strings.HasPrefix(l, "# ") && strings.Contains(l, " = ") {
			out = append(out, l...)
		}
	}
	if err := os.WriteFile(base+".smaps", out, 0o644); err != nil {
		return err
	}
	return os.WriteFile(base+".heap.pprof", heap, 0o644)
}

// adminGet returns the body of GET path on runedge's admin listener.
func adminGet(admin, path string) ([]byte, error) {
	req, _ := http.NewRequest("GET", "http://"+admin+path, nil)
	req.Header.Set("Authorization", "Bearer "+benchToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return nil, fmt.Errorf("GET %s: %s", path, res.Status)
	}
	return io.ReadAll(res.Body)
}
