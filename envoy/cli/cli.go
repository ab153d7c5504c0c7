// Package cli is the command line of runedge-xds, the xDS control plane
// (`runedge xds`, which execs it): serve the control plane, or write an
// Envoy bootstrap for it (`bootstrap`). It is a binary of its own so that
// the hosts' binary does not link the control plane: go-control-plane's
// packages register their protobuf types at init, and every host would
// hold their pages for nothing (docs/operations.md).
//
// Main is the whole program minus signal handling, so that it can be
// tested: it takes its arguments and output streams as parameters and
// reads no globals.
package cli

import (
	"context"
	"fmt"
	"io"
)

// Env is what a command may use from its surroundings.
type Env struct {
	Stdout, Stderr io.Writer
}

// Main runs the control plane, or `bootstrap`, with args (without the
// program name) and returns the process exit code. Errors read as they
// did when the control plane was `runedge xds` in the runedge binary, as
// operators still call it so.
func Main(ctx context.Context, args []string, env Env) int {
	var err error
	if len(args) > 0 && args[0] == "bootstrap" {
		err = bootstrapCmd(args[1:], env)
	} else {
		err = serve(ctx, args, env)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "runedge xds: %v\n", err)
		return 1
	}
	return 0
}
