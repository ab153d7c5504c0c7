package plugintest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// builds remembers each package's build for the life of the test process.
var builds = struct {
	sync.Mutex
	byPkg map[string]*build
}{byPkg: make(map[string]*build)}

// build is one package's build, done once.
type build struct {
	once sync.Once
	path string
	err  string
}

// Build builds the Go plugin pkg, an import path or a directory relative to
// the test's package (e.g. "./testdata/echo"), as a wasip1 reactor and
// returns the path of the .wasm file, named after pkg's last element. Each
// package is built once per test process; the file is left under
// os.TempDir() so that later runs overwrite it rather than pile up copies.
func Build(tb testing.TB, pkg string) string {
	tb.Helper()
	builds.Lock()
	b, ok := builds.byPkg[pkg]
	if !ok {
		b = &build{}
		builds.byPkg[pkg] = b
	}
	builds.Unlock()
	b.once.Do(func() { b.path, b.err = buildPlugin(pkg) })
	if b.err != "" {
		tb.Fatalf("plugintest: build %s: %s", pkg, b.err)
	}
	return b.path
}

// buildPlugin runs go build for pkg and returns the output path or a
// description of the failure.
func buildPlugin(pkg string) (string, string) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", err.Error()
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", err.Error()
	}
	// The directory depends on the working directory too, as a relative pkg
	// means different packages from different test packages.
	key := sha256.Sum256([]byte(cwd + "\x00" + pkg))
	dir := filepath.Join(os.TempDir(), "runedge-test-plugins", hex.EncodeToString(key[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err.Error()
	}
	// Build into a private directory and rename the result into place: test
	// binaries of several packages may build the same plugin at once, and a
	// reader must never see a half-written file.
	work, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err.Error()
	}
	defer os.RemoveAll(work)
	name := filepath.Base(strings.TrimRight(filepath.ToSlash(pkg), "/"))
	if name == "." || name == ".." || name == "/" {
		name = "plugin"
	}
	out := filepath.Join(work, name+".wasm")

	cmd := exec.Command(goTool, "build", "-buildmode=c-shared", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", err.Error() + "\n" + string(msg)
	}
	path := filepath.Join(dir, name+".wasm")
	if err := os.Rename(out, path); err != nil {
		return "", err.Error()
	}
	return path, ""
}
