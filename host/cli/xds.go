package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// xdsBinary is the control plane's binary. It is not linked into runedge:
// its go-control-plane packages register protobuf types at init and would
// cost every host their pages (docs/operations.md).
const xdsBinary = "runedge-xds"

// xds runs the control plane, `runedge xds …`, by executing runedge-xds in
// this process's place with the same arguments: the pid, the signals and
// the exit code are the control plane's, as when it was part of runedge.
// It returns only when runedge-xds cannot be found or executed. The
// environment passes on whole (os.Environ): the process is replaced, so
// Env has nothing to add.
func xds(args []string) error {
	path, err := findXDS()
	if err != nil {
		return err
	}
	err = syscall.Exec(path, append([]string{path}, args...), os.Environ())
	return fmt.Errorf("%s: %w", path, err)
}

// findXDS looks for runedge-xds next to the running executable first (the
// two are built together into bin/ and installed together), then on PATH.
func findXDS() (string, error) {
	self, err := os.Executable()
	if err == nil {
		if path, err := exec.LookPath(filepath.Join(filepath.Dir(self), xdsBinary)); err == nil {
			return path, nil
		}
	}
	if path, err := exec.LookPath(xdsBinary); err == nil {
		return path, nil
	}
	where := "next to this binary"
	if self != "" {
		where = "next to " + self
	}
	return "", errors.New("the control plane is a binary of its own, " + xdsBinary +
		", and it is neither " + where + " nor on PATH; build it with `make build` (bin/" + xdsBinary +
		") or `go build -o bin/" + xdsBinary + " ./envoy/cmd/runedge-xds`, and install it beside runedge")
}
