// Command bench-edge measures what runedge costs in front of a model
// provider, against a do-nothing reverse proxy in the same run (`make
// bench-edge`; docs/performance.md).
//
//	bench-edge run       the whole benchmark, printing a table
//	bench-edge upstream  the mock OpenAI-compatible upstream alone
//	bench-edge proxy     the baseline reverse proxy alone
//
// The load generator runs in this process; upstream, proxy and runedge are
// child processes, pinned to another core than the load with taskset when
// the machine has two (run this command itself under `taskset -c 0`, as
// the Makefile does).
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/runedge/runedge/bench/mockupstream"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bench-edge run|upstream|proxy [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "upstream":
		fs := flag.NewFlagSet("upstream", flag.ExitOnError)
		listen := fs.String("listen", "127.0.0.1:0", "address")
		fs.Parse(os.Args[2:])
		err = serve(*listen, mockupstream.Handler())
	case "proxy":
		fs := flag.NewFlagSet("proxy", flag.ExitOnError)
		listen := fs.String("listen", "127.0.0.1:0", "address")
		upstream := fs.String("upstream", "", "upstream base URL")
		fs.Parse(os.Args[2:])
		var h http.Handler
		if h, err = proxyHandler(*upstream); err == nil {
			err = serve(*listen, h)
		}
	case "run":
		err = runBench(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-edge:", err)
		os.Exit(1)
	}
}

func serve(addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return (&http.Server{Handler: h}).Serve(ln)
}
