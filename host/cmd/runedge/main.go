// Command runedge is the chat-compatible edge of an agent runner. main only
// turns signals into a context and calls cli.Main.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/runedge/runedge/host/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv})
	stop()
	os.Exit(code)
}
