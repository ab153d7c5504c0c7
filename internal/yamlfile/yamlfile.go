// Package yamlfile reads the YAML files runedge is configured by (the host's
// configuration and the gateway file of `runedge xds`) the one same way:
// unknown keys are errors, an empty document is not, and relative paths in
// the file mean relative to the file's own directory, not the working one.
package yamlfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// Read returns the bytes of the file at path and the absolute directory it
// stands in, which Resolve later resolves the file's paths against.
func Read(path string) (b []byte, dir string, err error) {
	if b, err = os.ReadFile(path); err != nil {
		return nil, "", err
	}
	if dir, err = filepath.Abs(filepath.Dir(path)); err != nil {
		return nil, "", err
	}
	return b, dir, nil
}

// Decode decodes the YAML document b into v. Unknown fields are errors: a
// misspelt key must not silently drop a setting. An empty document leaves v
// as it is.
func Decode(b []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// Resolve resolves p against dir; an empty, absolute or unanchored (dir "")
// path is returned as it is.
func Resolve(dir, p string) string {
	if p == "" || filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}
