// Package cli is runedge's command line. Main is the whole program minus
// signal handling, so that it can be tested: it takes its arguments, output
// streams and environment as parameters and reads no globals.
package cli

import (
	"context"
	"fmt"
	"io"
)

// Env is what a command may use from its surroundings.
type Env struct {
	Stdout, Stderr io.Writer
	// Getenv reads an environment variable (os.Getenv in main).
	Getenv func(string) string
}

// Main runs the command in args (without the program name) and returns the
// process exit code.
func Main(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 {
		usage(env.Stderr)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], env)
	case "runs":
		err = runs(ctx, args[1:], env)
	case "usage":
		err = usageCmd(ctx, args[1:], env)
	case "token":
		err = token(args[1:], env)
	case "config":
		err = configCmd(args[1:], env)
	case "plugin":
		err = plugin(ctx, args[1:], env)
	case "xds":
		err = xds(args[1:])
	case "help", "-h", "--help":
		usage(env.Stdout)
		return 0
	default:
		fmt.Fprintf(env.Stderr, "runedge: unknown command %q\n", args[0])
		usage(env.Stderr)
		return 2
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "runedge %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: runedge COMMAND [flags]

commands:
  serve         serve the three endpoints and the native run API
                (--config FILE, --listen ADDR; --xds ADDR --node ID with
                --xds-ca/--xds-cert/--xds-key, or --xds-insecure)
  runs          print recent runs as a table (--config FILE | --db PATH,
                --limit N, --tenant T, --status S)
  usage         print the usage ledger summed as a table (--config FILE |
                --db PATH, --from, --to, --group-by tenant,actor,token,
                --bucket hour|day|month|none, --tenant T)
  token new     generate a token and print it with its hash
  token hash    print the configuration hash of a token (argument or stdin)
  config check  load and validate a configuration file (--config FILE)
  xds           the xDS control plane for Envoy and hosts (--config GATEWAY,
                --tls-cert/--tls-key/--client-ca or --insecure, --listen ADDR,
                --http ADDR, --plugins DIR, --plugins-url URL); a binary of
                its own, runedge-xds, run from next to runedge or from PATH
  xds bootstrap write an Envoy bootstrap for it (--xds ADDR, --node ID,
                --ca/--cert/--key or --insecure, -o FILE)
  plugin check FILE
                load a plugin, run its self-test and sample requests through it
  plugin list   each stage's plugin on a running server (--admin ADDR)
  plugin swap STAGE FILE|SHA256
                swap a stage's plugin on a running server without a restart
                (a .wasm file, or the sha256 of one it already stored);
                STAGE is ENDPOINT/STAGE (chat.completions/translate) or a bare
                stage (map-request, translate) for both endpoints
                (--admin ADDR; token from RUNEDGE_ADMIN_TOKEN or SERVICE_TOKEN;
                --sig FILE, default FILE.sig when it exists)
  plugin keygen -o KEY
                make an ed25519 signing key; prints the plugins.trusted_keys line
  plugin sign --key KEY FILE
                write FILE.sig, the plugin's signature
`)
}
