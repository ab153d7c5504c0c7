// Package instructions is the logic of the tenant-instructions example
// plugin: a request mapper that gives each tenant's runs the system
// instructions its operator set, whatever the client sends.
//
// The instructions live in tenants.json, compiled into the plugin with
// the embed directive: a plugin has no files or environment to read at run time (see
// plugins/ABI.md), and a table built in means the sha256 the host reports
// identifies the instructions in force too.
package instructions

import (
	_ "embed"
	"fmt"

	"github.com/runedge/runedge/plugins/compat"
	"github.com/runedge/runedge/plugins/guestjson"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Version is the plugin's version, reported to the host.
const Version = "1.0.0"

//go:embed tenants.json
var tenantsJSON []byte

// table is the compiled-in table; tableErr says why it could not be read.
// A broken table does not panic at start-up, which would only say "plugin
// failed to instantiate": SelfTest reports it, naming the problem.
var table, tableErr = Parse(tenantsJSON)

// MapRequest is the map_request hook, for either endpoint, with the
// compiled-in table.
func MapRequest(in []byte) ([]byte, error) {
	if tableErr != nil {
		return nil, tableErr
	}
	return table.MapRequest(in)
}

// MapRequest maps the request with the default mapping (compat.MapRequest)
// and adds the instructions for the input's tenant_id. They go first in the
// native request's instructions, which the runner sends as the leading
// system message, so they come before anything the client says, including
// its own system messages and instructions (kept after a blank line). The
// echo, which the Responses reply repeats to the client, is left alone: the
// tenant's instructions are the operator's, not the client's.
//
// Input: {"endpoint","tenant_id","actor":{…},"body":{…}}; output as
// compat.MapRequest's.
func (t Table) MapRequest(in []byte) ([]byte, error) {
	mapped, err := compat.MapRequest(in)
	if err != nil {
		return nil, err
	}
	text := t.For(gjson.GetBytes(in, "tenant_id").String())
	if text == "" {
		return mapped, nil
	}
	if own := gjson.GetBytes(mapped, "request.instructions"); own.Type == gjson.String && own.Str != "" {
		text += "\n\n" + own.Str
	}
	return sjson.SetBytes(mapped, "request.instructions", text)
}

// SelfTest is the self_test hook: the table must have been read, the
// default mapping must work, and a listed tenant and an unlisted one must get
// their instructions.
func SelfTest() error {
	if tableErr != nil {
		return fmt.Errorf("tenant-instructions: tenants.json: %w", tableErr)
	}
	if err := compat.SelfTest(); err != nil {
		return err
	}
	return table.check()
}

// check maps a sample request for one listed tenant, if any, and for one
// that is not listed.
func (t Table) check() error {
	tenants := []string{"\x00not listed"}
	for tenant := range t.Tenants {
		tenants = append(tenants, tenant)
		break
	}
	for _, tenant := range tenants {
		in := append([]byte(`{"endpoint":"chat.completions","tenant_id":`), guestjson.AppendString(nil, tenant)...)
		in = append(in, `,"body":{"model":"service","messages":[{"role":"user","content":"ping"}]}}`...)
		out, err := t.MapRequest(in)
		if err != nil {
			return fmt.Errorf("tenant-instructions self-test: tenant %q: %w", tenant, err)
		}
		if got := gjson.GetBytes(out, "request.instructions").String(); got != t.For(tenant) {
			return fmt.Errorf("tenant-instructions self-test: tenant %q got instructions %q", tenant, got)
		}
	}
	return nil
}
