package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// ecdsNeeds are the go-control-plane packages `runedge serve --xds` may
// link: the ECDS subscriber (envoy/ecds) speaks ADS with the discovery
// service's messages and names its node with core's, and those two import
// the rest. Every other go-control-plane package is the control plane's
// (runedge-xds): their init functions register protobuf types and fault in
// the pages around them, file RSS every host would hold for nothing.
var ecdsNeeds = []string{
	"github.com/envoyproxy/go-control-plane/envoy/annotations",
	"github.com/envoyproxy/go-control-plane/envoy/config/core/v3",
	"github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3",
	"github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3",
	"github.com/envoyproxy/go-control-plane/envoy/type/v3",
}

// controlPlane are runedge's own packages of the control plane.
var controlPlane = []string{
	"github.com/runedge/runedge/envoy/server",
	"github.com/runedge/runedge/envoy/bootstrap",
	"github.com/runedge/runedge/envoy/internal/translate",
	"github.com/runedge/runedge/envoy/cli",
}

// TestServeBinaryLeavesOutControlPlane fails when the runedge binary links
// the xDS control plane again (it has a binary of its own, runedge-xds) or
// a go-control-plane package ECDS does not need.
func TestServeBinaryLeavesOutControlPlane(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(goTool, "list", "-deps", "github.com/runedge/runedge/host/cmd/runedge").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/runedge/runedge/envoy/ecds") {
		t.Fatalf("runedge does not link envoy/ecds: is this list still about `serve --xds`?\n%s", out)
	}
	for _, p := range deps {
		if slices.Contains(controlPlane, p) ||
			(strings.HasPrefix(p, "github.com/envoyproxy/go-control-plane/") && !slices.Contains(ecdsNeeds, p)) {
			t.Errorf("runedge links %s: the control plane belongs in runedge-xds (envoy/cmd/runedge-xds)", p)
		}
	}
}
