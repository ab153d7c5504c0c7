package instructions

import (
	"errors"
	"fmt"

	"github.com/tidwall/gjson"
)

// Table holds the instructions added for each tenant.
type Table struct {
	// Default applies to tenants not listed; "" adds nothing.
	Default string
	// Tenants maps a tenant id to its instructions.
	Tenants map[string]string
}

// Parse reads a table from JSON of the form
//
//	{"default":"…","tenants":{"<tenant id>":"<instructions>",…}}
//
// where "default" may be left out. It refuses anything else, so that a typo
// in the file fails the plugin's self-test instead of silently dropping a
// tenant's instructions.
func Parse(data []byte) (Table, error) {
	if !gjson.ValidBytes(data) {
		return Table{}, errors.New("not valid JSON")
	}
	root := gjson.ParseBytes(data)
	if !root.IsObject() {
		return Table{}, errors.New(`want an object {"default":…,"tenants":{…}}`)
	}
	t := Table{Tenants: make(map[string]string)}
	var err error
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "default":
			if v.Type != gjson.String {
				err = errors.New(`"default" must be a string`)
			}
			t.Default = v.Str
		case "tenants":
			err = t.readTenants(v)
		default:
			err = fmt.Errorf("unknown key %q (want \"default\" and \"tenants\")", k.Str)
		}
		return err == nil
	})
	return t, err
}

// readTenants reads the "tenants" object.
func (t *Table) readTenants(v gjson.Result) error {
	if !v.IsObject() {
		return errors.New(`"tenants" must be an object of tenant id to instructions`)
	}
	var err error
	v.ForEach(func(k, v gjson.Result) bool {
		switch {
		case k.Str == "":
			err = errors.New(`"tenants" has an empty tenant id`)
		case v.Type != gjson.String || v.Str == "":
			err = fmt.Errorf("tenant %q: instructions must be a non-empty string", k.Str)
		default:
			if _, dup := t.Tenants[k.Str]; dup {
				err = fmt.Errorf("tenant %q is listed twice", k.Str)
			}
			t.Tenants[k.Str] = v.Str
		}
		return err == nil
	})
	return err
}

// For returns the instructions for tenant: its own, else the default.
func (t Table) For(tenant string) string {
	if s, ok := t.Tenants[tenant]; ok {
		return s
	}
	return t.Default
}
