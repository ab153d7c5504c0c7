package cli

import "github.com/runedge/runedge/plugins/compat"

// The reference `plugin check` compares a plugin with is the default
// mapping, run natively: this file is the one place the host links the
// guest library plugins/compat, deliberately. The default plugin
// (plugins/openai) is compat's MapRequest and MapResult registered with
// the guest SDK, so calling compat here runs the same code
// they run in wasm. Running it natively lets an operator check a plugin
// file on its own — in CI, before a swap, on a machine without a
// configuration or the built default plugin — and keeps the check's
// reference fixed to the binary's own default rather than to whatever
// plugin a configuration happens to name. The serving path never maps
// natively: every reply and every rebuilt Response object comes from the
// configured plugin (RATIONALE.md, "The host does not map natively").

// defaultRequest is the default mapping's map_request.
func defaultRequest(in []byte) ([]byte, error) { return compat.MapRequest(in) }

// defaultResult is the default mapping's map_result.
func defaultResult(in []byte) ([]byte, error) { return compat.MapResult(in) }
