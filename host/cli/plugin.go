package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/internal/admin"
)

// digestRE matches a stored plugin's sha256, which swap accepts in place of
// a file.
var digestRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

func plugin(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 {
		return errors.New("want `plugin check FILE`, `plugin list` or `plugin swap STAGE FILE`")
	}
	switch args[0] {
	case "check":
		return pluginCheck(ctx, args[1:], env)
	case "list":
		return pluginList(ctx, args[1:], env)
	case "swap":
		return pluginSwap(ctx, args[1:], env)
	case "keygen":
		return pluginKeygen(args[1:], env)
	case "sign":
		return pluginSign(args[1:], env)
	}
	return fmt.Errorf("unknown subcommand %q (want check, list, swap, keygen or sign)", args[0])
}

// adminFlags are the flags of the commands that talk to a running server.
type adminFlags struct {
	addr  *string
	token *string
	// signature, when set, goes with a swap (admin.SignatureHeader).
	signature string
}

func newAdminFlags(fs *flag.FlagSet, env Env) adminFlags {
	tok := env.Getenv("RUNEDGE_ADMIN_TOKEN")
	if tok == "" {
		tok = env.Getenv("SERVICE_TOKEN")
	}
	return adminFlags{
		addr:  fs.String("admin", config.DefaultAdminListen, "the server's admin address (admin.listen)"),
		token: fs.String("token", tok, "an admin token (default $RUNEDGE_ADMIN_TOKEN, else $SERVICE_TOKEN)"),
	}
}

// do calls the admin API and decodes its JSON answer into out.
func (a adminFlags) do(ctx context.Context, method, path, contentType string, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://"+*a.addr+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+*a.token)
	// The server's swap history names the CLI as what triggered a swap.
	req.Header.Set("User-Agent", admin.CLIUserAgent)
	if a.signature != "" {
		req.Header.Set(admin.SignatureHeader, a.signature)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("admin API at %s: %w", *a.addr, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
			return fmt.Errorf("%s (HTTP %d)", e.Error.Message, res.StatusCode)
		}
		return fmt.Errorf("admin API: HTTP %d", res.StatusCode)
	}
	return json.Unmarshal(b, out)
}

func printPlugins(env Env, list []admin.PluginInfo) error {
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tPLUGIN\tVERSION\tSHA256\tSINCE\tHOOKS\tINSTANCES")
	for _, p := range list {
		sum := "-" // the built-in default: no file
		if len(p.SHA256) >= 16 {
			sum = p.SHA256[:16] + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\t%d\n", p.Stage, p.Plugin, p.Version, sum,
			time.Unix(p.Since, 0).UTC().Format(time.DateTime), p.Hooks, p.Instances)
	}
	return tw.Flush()
}

func pluginList(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("plugin list", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	a := newAdminFlags(fs, env)
	if err := fs.Parse(args); err != nil {
		return err
	}
	var out struct{ Data []admin.PluginInfo }
	if err := a.do(ctx, http.MethodGet, "/admin/v1/plugins", "", nil, &out); err != nil {
		return err
	}
	return printPlugins(env, out.Data)
}

func pluginSwap(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("plugin swap", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	a := newAdminFlags(fs, env)
	sigFile := fs.String("sig", "", "the plugin's signature file, for a server with plugins.trusted_keys (default FILE.sig when it exists)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return errors.New("want `plugin swap STAGE FILE`")
	}
	stage, file := fs.Arg(0), fs.Arg(1)
	body, contentType := []byte(`{"sha256":"`+file+`"}`), "application/json"
	switch {
	case file == config.BuiltinPlugin: // back to the built-in default, run natively
		body = []byte(`{"plugin":"` + file + `"}`)
	case !digestRE.MatchString(file): // a file to upload, not a stored plugin's digest
		wasm, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		body, contentType = wasm, "application/wasm"
		if *sigFile == "" {
			if _, err := os.Stat(file + ".sig"); err == nil {
				*sigFile = file + ".sig"
			}
		}
	}
	if *sigFile != "" {
		sig, err := os.ReadFile(*sigFile)
		if err != nil {
			return err
		}
		a.signature = strings.TrimSpace(string(sig))
	}
	var out struct{ Data []admin.PluginInfo }
	if err := a.do(ctx, http.MethodPut, "/admin/v1/plugins/"+stage, contentType, body, &out); err != nil {
		return fmt.Errorf("swap %s: %w", stage, err)
	}
	fmt.Fprintf(env.Stdout, "swapped %s to %s\n", stage, file)
	return printPlugins(env, out.Data)
}
