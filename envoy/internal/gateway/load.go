// Package gateway reads the declarative gateway file of `runedge xds`:
// the listeners, clusters, timeouts and optional ext_authz Envoy is given,
// and the chains pushed to the hosts. Loading only decodes and checks;
// translate.Build resolves a checked file and translate.Translate turns it
// into Envoy resources.
package gateway

import (
	"fmt"

	"github.com/runedge/runedge/internal/yamlfile"
)

// Load reads and validates the gateway file at path. Unknown fields are
// errors: a misspelt key must not silently drop a listener or a timeout.
func Load(path string) (*File, error) {
	b, dir, err := yamlfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("gateway %s: %w", path, err)
	}
	f.Dir = dir
	return f, nil
}

// Parse decodes and validates a gateway document.
func Parse(b []byte) (*File, error) {
	f := &File{}
	if err := yamlfile.Decode(b, f); err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// Path resolves p against the file's directory.
func (f *File) Path(p string) string {
	return yamlfile.Resolve(f.Dir, p)
}
