// Package contract is the OpenAI contract runedge serves, written down
// once: the id scheme (run_X behind chatcmpl-X, resp_X, msg_X, fc_X_i, rs_X
// and cmp_X; conv_X is sess_X), the endpoint names recorded on runs and
// passed to mapping plugins, the stage names of the chains, the Response
// fields that echo a request setting (and their defaults), and the paging
// limits of the list endpoints. The host, the runner, the stages and the
// default mapping plugin all import it, so none of them spells a prefix or
// a limit of its own and none can drift from the others (DESIGN "One
// table per contract").
//
// Why here, under internal/: the package is imported by the runner (which
// imports nothing of filters, plugins or host), by plugins/compat (compiled
// to WebAssembly with GOOS=wasip1) and by envoy, so it must sit below all
// of them and import nothing but the standard library. DESIGN fixes the
// top-level folders, and plugins/ imports runner/ (plugins/abi reads
// runner/native), so a home under plugins/ would make the runner import
// upward. Its sister table, the route table, lives beside it
// (internal/httproute). It is not an API for plugin authors: a plugin is
// handed its ids by the host (the map_result input's id and message_id),
// and a plugin built on plugins/compat gets the scheme through it.
//
// The package holds constants, small tables and pure functions only: no
// state, no I/O, nothing that allocates beyond the ids it returns.
package contract
