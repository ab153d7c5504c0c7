package translate

import (
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

	"github.com/runedge/runedge/envoy/internal/protoyaml"
)

// YAML renders the resources as one YAML document, a list per kind, for
// golden files and for people reading what the control plane serves.
func (r *Resources) YAML() ([]byte, error) {
	doc := map[string][]any{}
	var err error
	add := func(key string, m proto.Message) {
		if err != nil {
			return
		}
		var v any
		if v, err = protoyaml.Value(m); err == nil {
			doc[key] = append(doc[key], v)
		}
	}
	for _, m := range r.Listeners {
		add("listeners", m)
	}
	for _, m := range r.APIListeners {
		add("api_listeners", m)
	}
	for _, m := range r.Routes {
		add("routes", m)
	}
	for _, m := range r.Clusters {
		add("clusters", m)
	}
	for _, m := range r.Endpoints {
		add("endpoints", m)
	}
	for _, m := range r.Extensions {
		add("extension_configs", m)
	}
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(doc)
}
