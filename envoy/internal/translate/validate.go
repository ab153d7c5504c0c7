package translate

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/runedge/runedge/envoy/ecds"
	"github.com/runedge/runedge/envoy/internal/deep"
)

// Validate checks every resource in depth (deep.Validate): the resource and
// every config packed in an Any inside it — the HTTP connection manager in
// a listener, the router and ext_authz in it, TLS transport sockets,
// cluster protocol options. Chain resources are also decoded as a host
// would.
func (r *Resources) Validate() error {
	var errs []error
	check := func(kind, name string, m proto.Message) {
		if err := deep.Validate(m); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", kind, name, err))
		}
	}
	for _, l := range r.Listeners {
		check("listener", l.GetName(), l)
	}
	for _, l := range r.APIListeners {
		check("api listener", l.GetName(), l)
	}
	for _, rc := range r.Routes {
		check("route configuration", rc.GetName(), rc)
	}
	for _, c := range r.Clusters {
		check("cluster", c.GetName(), c)
	}
	for _, e := range r.Endpoints {
		check("endpoints", e.GetClusterName(), e)
	}
	for _, x := range r.Extensions {
		check("extension config", x.GetName(), x)
		if _, _, err := ecds.Decode(x); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
