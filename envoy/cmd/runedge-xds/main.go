// Command runedge-xds is runedge's xDS control plane: it configures Envoy
// and pushes chains and plugins to the hosts (`runedge serve --xds`), and
// writes Envoy's bootstrap (`runedge-xds bootstrap`). Operators usually
// call it as `runedge xds …`: the runedge binary execs this one, found
// next to it or on PATH. main only turns signals into a context and calls
// cli.Main.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/runedge/runedge/envoy/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Env{Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
