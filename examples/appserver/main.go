// Command appserver is the example application server of runedge's proxy
// pattern: it logs its own users in, serves a chat page, and forwards the
// page's requests to runedge with the bearer token and the user's identity,
// so the token never reaches a browser. See README.md.
//
//	RUNEDGE_TOKEN=... appserver -users users.json -runedge http://127.0.0.1:8080
//	appserver hash-password < password.txt
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/runedge/runedge/examples/appserver/app"
	"github.com/runedge/runedge/examples/appserver/login"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "appserver:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "hash-password" {
		return hashPassword(os.Stdin, os.Stdout)
	}
	fs := flag.NewFlagSet("appserver", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:3000", "address to serve the page and API on")
	upstream := fs.String("runedge", envOr("RUNEDGE_URL", "http://127.0.0.1:8080"), "runedge's base URL (env RUNEDGE_URL)")
	usersPath := fs.String("users", "examples/appserver/users.json", "JSON file of users (see README.md)")
	secure := fs.String("secure-cookie", "auto", "mark the session cookie Secure: true, false, or auto (Secure unless -listen is a loopback address)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// The token comes from the environment, not a flag, so it does not
	// show up in process listings.
	token := os.Getenv("RUNEDGE_TOKEN")
	if token == "" {
		return errors.New("RUNEDGE_TOKEN is not set: it is the runedge bearer token this server uses")
	}
	secureCookie := login.SecureByDefault(*listen)
	switch *secure {
	case "auto":
	case "true", "false":
		secureCookie = *secure == "true"
	default:
		return fmt.Errorf("-secure-cookie must be true, false or auto, not %q", *secure)
	}
	users, err := login.LoadUsers(*usersPath)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	h, err := app.New(app.Config{Users: users, Runedge: *upstream, Token: token, SecureCookie: secureCookie, Log: log})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	// No write timeout: answers stream for as long as they take.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	fmt.Fprintf(os.Stderr, "appserver: open http://%s (runedge at %s)\n", ln.Addr(), *upstream)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Give streams a moment to end; then close them, which cancels their
	// runs in runedge as a closed browser tab would.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	return nil
}

// hashPassword reads a password (the first line of r) and prints its hash
// for the users file.
func hashPassword(r io.Reader, w io.Writer) error {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && line == "" {
		return fmt.Errorf("reading the password from stdin: %w", err)
	}
	pw := strings.TrimRight(line, "\r\n")
	if pw == "" {
		return errors.New("empty password")
	}
	h, err := login.HashPassword(pw, login.DefaultIterations)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, h)
	return err
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
