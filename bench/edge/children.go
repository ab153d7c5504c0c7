package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// The machine and the child processes: CPUs, pinning, starting, stopping
// and waiting for the targets.

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return "unknown CPU"
}

// machineCPUs counts the machine's CPUs, not this process's share of
// them: runtime.NumCPU honours the affinity mask, and this process runs
// under taskset -c 0.
func machineCPUs() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	n := strings.Count(string(b), "\nprocessor")
	if strings.HasPrefix(string(b), "processor") {
		n++
	}
	return max(n, runtime.NumCPU())
}

// pinner returns the taskset prefix that puts a child on core 1, or nil
// when the machine has one core or no taskset.
func pinner() []string {
	if machineCPUs() < 2 {
		return nil
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return nil
	}
	return []string{"taskset", "-c", "1"}
}

func startChild(pin []string, dir, name, bin string, args ...string) (*exec.Cmd, error) {
	argv := append(append(append([]string{}, pin...), bin), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "BENCH_UPSTREAM_KEY=sk-bench")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return cmd, nil
}

func stop(cmd *exec.Cmd) {
	cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitHTTP(url string) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer "+benchToken)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer", url)
}
