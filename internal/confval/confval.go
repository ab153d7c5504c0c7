// Package confval holds the value types and the error collector shared by
// every part of the configuration file: host/config, which composes the
// file, and the stages (filters/…), each of which owns its own section.
// It imports nothing of runedge, so any package may use it.
package confval

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Duration is a time.Duration written as "10s", "5m". A value that does not
// parse is kept as an error for Validate, which names the field.
type Duration struct {
	d   time.Duration
	bad string
}

// Dur makes a Duration.
func Dur(d time.Duration) Duration { return Duration{d: d} }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		*d = Duration{bad: string(b)}
		return nil
	}
	*d = Duration{d: v}
	return nil
}

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return d.d }

// Check reports a value that did not parse, or a negative one ("" when d
// is good).
func (d Duration) Check() string {
	switch {
	case d.bad != "":
		return "\"" + d.bad + "\" is not a duration (e.g. 500ms, 10s, 5m)"
	case d.d < 0:
		return "must not be negative"
	}
	return ""
}

// Problems collects the problems of one section, each naming its field as
// it is written in the file: the section's path (given by the file's
// composer, so a part does not need to know where it sits), a dot, the
// field.
type Problems struct {
	path string
	errs []error
}

// At starts collecting the problems of the section at path ("limits",
// "tools"; "" for the top level).
func At(path string) *Problems { return &Problems{path: path} }

// Field is the name of field in the section, as Add writes it.
func (p *Problems) Field(field string) string {
	if p.path == "" {
		return field
	}
	return p.path + "." + field
}

// Add reports a problem of field.
func (p *Problems) Add(field, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s: %s", p.Field(field), fmt.Sprintf(format, args...)))
}

// Duration reports a duration field that did not parse or is negative.
func (p *Problems) Duration(field string, d Duration) {
	if msg := d.Check(); msg != "" {
		p.Add(field, "%s", msg)
	}
}

// Err returns the problems joined, or nil.
func (p *Problems) Err() error { return errors.Join(p.errs...) }

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// EnvName says whether s can name an environment variable: a field that
// names one (api_key_env, secret_env) must not hold the secret itself.
func EnvName(s string) bool { return envNameRE.MatchString(s) }
