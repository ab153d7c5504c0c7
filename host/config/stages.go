package config

import (
	"errors"

	"github.com/runedge/runedge/internal/contract"
)

// Part is a section (or the part of a shared section) that a stage owns:
// its type lives in the stage's package (filters/<stage>/config.go) with
// its defaults and its checks, as a Caddy module owns its config. The file
// keeps its shape: a part owning only some fields of a shared section
// (limits, plugins) is inlined into it.
type Part interface {
	// Defaults fills the fields left unset.
	Defaults()
	// Validate reports every problem, each naming its field under path,
	// the part's place in the file ("limits", "tools").
	Validate(path string) error
}

// StagePart is one entry of StageParts: which stage owns the part, and
// where it sits in the file.
type StagePart struct {
	Stage string // as in filters/builtin.Order
	Path  string // the section, as written in the file
	Part  Part
}

// StageParts is the one list of the configuration the stages own, in the
// order of filters/builtin.Order: applyDefaults and Validate walk it, and
// nothing else names a stage's fields here. A stage with settings adds its
// part to Config and a line to this list.
func (c *Config) StageParts() []StagePart {
	return []StagePart{
		{contract.StageAuth, "actors", &c.Actors},
		{contract.StageAuth, "limits", &c.Limits.RateConfig},
		{contract.StageBody, "limits", &c.Limits.Config},
		{contract.StageMapRequest, "tools", &c.Tools},
		{contract.StageMapRequest, "media", &c.Media},
		{contract.StageCompaction, "compaction", &c.Compaction},
		{contract.StageTranslate, "limits", &c.Limits.KeepaliveConfig},
		{contract.StageTranslate, "plugins", &c.Plugins.WindowConfig},
	}
}

// stageDefaults applies each stage's defaults.
func (c *Config) stageDefaults() {
	for _, p := range c.StageParts() {
		p.Part.Defaults()
	}
}

// validateStages joins every stage's problems.
func (c *Config) validateStages() error {
	var errs []error
	for _, p := range c.StageParts() {
		errs = append(errs, p.Part.Validate(p.Path))
	}
	return errors.Join(errs...)
}
