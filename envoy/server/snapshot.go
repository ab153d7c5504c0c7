package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/runedge/runedge/envoy/internal/translate"
)

type snapshot = cache.Snapshot

// snapshots are one gateway version as each group of nodes sees it.
type snapshots struct {
	// version is derived from the content: reloading an unchanged file
	// serves nothing new, and the same file gets the same version after a
	// restart.
	version       string
	proxy, client *snapshot
}

// newSnapshots builds and checks the snapshots of res. The resources were
// validated in depth by translate; here the snapshot as a whole must be
// consistent: every route configuration and EDS assignment a listener or
// cluster refers to is present, and nothing else.
func newSnapshots(res *translate.Resources) (*snapshots, error) {
	common := map[string][]types.Resource{
		resource.RouteType:           typed(res.Routes),
		resource.ClusterType:         typed(res.Clusters),
		resource.EndpointType:        typed(res.Endpoints),
		resource.ExtensionConfigType: typed(res.Extensions),
	}
	proxy := clone(common)
	proxy[resource.ListenerType] = typed(res.Listeners)
	client := clone(common)
	client[resource.ListenerType] = append(typed(res.Listeners), typed(res.APIListeners)...)

	version, err := versionOf(client)
	if err != nil {
		return nil, err
	}
	out := &snapshots{version: version}
	for _, s := range []struct {
		dst   **snapshot
		group string
		res   map[string][]types.Resource
	}{{&out.proxy, proxyGroup, proxy}, {&out.client, clientGroup, client}} {
		snap, err := cache.NewSnapshot(version, s.res)
		if err != nil {
			return nil, fmt.Errorf("%s snapshot: %w", s.group, err)
		}
		if err := snap.Consistent(); err != nil {
			return nil, fmt.Errorf("%s snapshot is inconsistent: %w", s.group, err)
		}
		*s.dst = snap
	}
	return out, nil
}

// versionOf hashes every resource, by type in a fixed order and in the
// order translate produced them, which is the file's order.
func versionOf(res map[string][]types.Resource) (string, error) {
	h := sha256.New()
	det := proto.MarshalOptions{Deterministic: true}
	for _, t := range []string{resource.ListenerType, resource.RouteType, resource.ClusterType, resource.EndpointType, resource.ExtensionConfigType} {
		for _, r := range res[t] {
			b, err := det.Marshal(r)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "%s %d\n", t, len(b))
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func typed[T types.Resource](in []T) []types.Resource {
	out := make([]types.Resource, len(in))
	for i, r := range in {
		out[i] = r
	}
	return out
}

func clone(m map[string][]types.Resource) map[string][]types.Resource {
	out := make(map[string][]types.Resource, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
