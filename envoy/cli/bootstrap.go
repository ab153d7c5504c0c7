package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/runedge/runedge/envoy/bootstrap"
)

// bootstrapCmd writes the Envoy bootstrap pointing at the control plane.
func bootstrapCmd(args []string, env Env) error {
	fs := flag.NewFlagSet("xds bootstrap", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var o bootstrap.Options
	fs.StringVar(&o.XDS, "xds", "", "control plane ADS address as Envoy reaches it (host:port)")
	fs.StringVar(&o.NodeID, "node", "", "node ID of this Envoy")
	fs.StringVar(&o.Cluster, "cluster", "", "node cluster (default runedge-edge)")
	fs.StringVar(&o.Admin, "admin", "", "Envoy admin address (default 127.0.0.1:9901)")
	fs.BoolVar(&o.Delta, "delta", false, "use incremental (delta) xDS")
	fs.StringVar(&o.CAFile, "ca", "", "CA certificate (PEM) of the control plane's certificate, as a path on Envoy's machine")
	fs.StringVar(&o.CertFile, "cert", "", "Envoy's client certificate (PEM) for the control plane, as a path on Envoy's machine")
	fs.StringVar(&o.KeyFile, "key", "", "the key of --cert (PEM), as a path on Envoy's machine")
	fs.BoolVar(&o.Insecure, "insecure", false, "plaintext ADS (tests and trusted networks only)")
	out := fs.String("o", "-", "output file (- for stdout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.XDS == "" || o.NodeID == "" {
		return errors.New("--xds and --node are required")
	}
	// The header names the command operators type, `runedge xds`, which
	// execs this binary: the same bootstrap either way.
	cmd := fmt.Sprintf("runedge xds bootstrap --xds %s --node %s", o.XDS, o.NodeID)
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "xds" && f.Name != "node" && f.Name != "o" {
			cmd += fmt.Sprintf(" --%s %s", f.Name, f.Value)
		}
	})
	y, err := bootstrap.YAML(o, cmd)
	if err != nil {
		return err
	}
	if o.Insecure {
		fmt.Fprintln(env.Stderr, "runedge xds bootstrap: WARNING: --insecure: this Envoy will take its configuration over plaintext ADS")
	}
	if *out == "-" {
		_, err = env.Stdout.Write(y)
		return err
	}
	return os.WriteFile(*out, y, 0o644)
}
