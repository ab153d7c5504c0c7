// Command runedge is the chat-compatible edge of an agent runner. main only
// turns signals into a context and calls cli.Main (serve first runs itself
// again with the runtime setting host/internal/sysmon explains).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/runedge/runedge/host/cli"
	"github.com/runedge/runedge/host/internal/sysmon"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		// A host runs with the runtime's monitor kept from its deep sleep
		// (host/internal/sysmon); if running itself again fails, it serves
		// as it is.
		_ = sysmon.Exec()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv})
	stop()
	os.Exit(code)
}
