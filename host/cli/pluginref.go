package cli

import "github.com/runedge/runedge/plugins/compat"

// The reference `plugin check` compares a plugin with is the default
// mapping, run natively: the plugins/compat functions that the default
// plugin (plugins/openai) registers with the guest SDK, and that a host
// runs natively while its configuration names the built-in default
// (plugins/native). Running it natively lets an operator check a plugin
// file on its own — in CI, before a swap, on a machine without a
// configuration or the built default plugin — and keeps the check's
// reference fixed to the binary's own default rather than to whatever
// plugin a configuration happens to name. The default's WebAssembly build
// passes the check against it (TestPluginCheckDefaultPlugin), which is
// what makes the two builds interchangeable (RATIONALE.md, "The default
// mapping runs natively").

// defaultRequest is the default mapping's map_request.
func defaultRequest(in []byte) ([]byte, error) { return compat.MapRequest(in) }

// defaultResult is the default mapping's map_result.
func defaultResult(in []byte) ([]byte, error) { return compat.MapResult(in) }
