package config

import (
	"fmt"

	"github.com/runedge/runedge/internal/yamlfile"
)

// Load reads, defaults and validates the file at path. Unknown fields are
// errors: a misspelt key must not silently fall back to a default.
func Load(path string) (*Config, error) {
	b, dir, err := yamlfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	c.Dir = dir
	return c, nil
}

// Parse decodes, defaults and validates a configuration document.
func Parse(b []byte) (*Config, error) {
	c := &Config{}
	if err := yamlfile.Decode(b, c); err != nil {
		return nil, err
	}
	c.applyDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Path resolves p against the configuration's directory.
func (c *Config) Path(p string) string {
	return yamlfile.Resolve(c.Dir, p)
}
