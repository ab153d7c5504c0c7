// Package protoyaml writes protobuf messages as YAML the way Envoy's own
// documentation shows them: protojson's canonical form with the proto field
// names (snake_case) and "@type" inside Any, converted to YAML.
package protoyaml

import (
	"encoding/json"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"
)

var opts = protojson.MarshalOptions{UseProtoNames: true}

// Marshal renders m as YAML. Keys are sorted, so the output is stable and
// can be compared with a golden file.
func Marshal(m proto.Message) ([]byte, error) {
	j, err := opts.Marshal(m)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(j)
}

// Value returns m as a generic value (maps, slices, strings…), for
// assembling several messages into one YAML document.
func Value(m proto.Message) (any, error) {
	j, err := opts.Marshal(m)
	if err != nil {
		return nil, err
	}
	var v any
	err = json.Unmarshal(j, &v)
	return v, err
}
