// Package abi is the runedge plugin ABI in Go: the numbers (version, export
// names, hook bits, statuses) and, for each hook, the types of its input and
// output with the one codec that writes and reads them. The host's stages
// (filters/mapping, filters/translate), its runtime (plugins/runtime), the
// plugin CLI (runedge plugin check), the guest SDK (plugins/sdk) and the
// default mappings (plugins/compat) all encode and decode envelopes here, so
// the envelopes cannot drift apart; plugins/ABI.md is the same contract in
// prose, for plugins written in other languages.
//
// # The module
//
// A plugin is a core WebAssembly 2.0 module (wasm32), typically a WASI
// preview 1 reactor (Go: GOOS=wasip1 GOARCH=wasm go build
// -buildmode=c-shared, with an empty func main). It imports nothing but
// wasi_snapshot_preview1 functions (the module name runedge_host is the
// host's), exports its memory as [ExportMemory], and is initialised by its
// start section, then _initialize if exported; _start is never called.
// Pointers and lengths are unsigned i32 offsets into the plugin's memory.
//
// # Exports
//
//	export               type                   required
//	memory               memory                 yes
//	runedge_abi_version  () -> i32              yes: returns [Version]
//	runedge_hooks        () -> i32              yes: bits [HookMapRequest] [HookMapResult] [HookSelfTest] [HookMapStream]
//	runedge_alloc        (size i32) -> i32      yes: a buffer for the next input
//	runedge_output       () -> i64              yes: the last output, (ptr << 32) | len
//	runedge_map_request  (ptr i32, len i32) -> i32   with bit 0
//	runedge_map_result   (ptr i32, len i32) -> i32   with bit 1
//	runedge_self_test    () -> i32              with bit 2
//	runedge_map_stream   (ptr i32, len i32) -> i32   with bit 3
//	runedge_version      () -> i64              no: the plugin's version, (ptr << 32) | len
//
// The names are the Export constants. A missing or mistyped required export,
// a mistyped optional one, another ABI version, an unknown hook bit
// (outside [KnownHooks]) or no mapping hook ([MappingHooks]) fails the load.
//
// # Calls
//
// A call is: ptr = runedge_alloc(len(input)); the host writes the input at
// ptr; status = the hook(ptr, len); out = runedge_output(), from which the
// host copies len bytes at out>>32 before the instance serves anyone else.
// The buffer need only stay valid until the next alloc or call (a guest
// with a garbage collector keeps it reachable from a global). A hook
// returns [StatusOK] with the mapped bytes, [StatusInvalid] with an
// [InputError] body (the client's fault: HTTP 400), or [StatusFailed] with
// a message for operators (a fault: HTTP 500 plugin_error). Loading calls,
// in order: instantiation, runedge_abi_version, runedge_hooks,
// runedge_version, runedge_self_test; only a plugin that passes all of
// them replaces the one serving.
//
// # Hooks and their envelopes
//
//	hook         input              output (status 0)
//	map_request  [RequestInput]     [RequestOutput]: {"request": native run request, "echo": {...}}
//	map_result   [ResultInput]      the reply body: a JSON object (chat.completion, response)
//	map_stream   [StreamInput]      [StreamOutput]: {"emit","hold"}
//	self_test    none               none; status 0 means the plugin works
//
// The host writes inputs with the AppendJSON methods and reads outputs with
// [DecodeRequestOutput], [NormalizeResult], [DecodeStreamOutput] and
// [DecodeInputError] (the three Decode functions are host only: a wasip1
// build leaves them out, and with them gjson, which would link
// encoding/json's reflection into every guest); a guest reads inputs with
// [ParseRequestInput], [ParseResultInput], [ParseStreamInput] and writes
// outputs with [StreamOutput.AppendJSON], [InputError.AppendJSON] (a
// map_request output is written by the mapping, see plugins/compat). Whatever the host's decoders
// refuse fails the request with HTTP 500 plugin_error naming the plugin, and
// the run is recorded failed with reason plugin_error.
//
// A map_result input's status ([ResultInput].Status) says which object to
// build: [ResultCompleted] for the final reply, [ResultInProgress] for the
// Response of response.created (and of a stored response read while it
// runs), and [ResultQueued], [ResultCancelled], [ResultFailed] for a stored
// Response read back before its final object exists (GET
// /v1/responses/{id}, a cancel); the result is empty then, and the host
// adds the run's error to a failed one.
//
// # Faults, instances and limits
//
// Anything else is the plugin's fault and fails that one request with 500
// plugin_error: a trap, a status other than 0, 1 or 2, an output or buffer
// outside memory, an output the decoders refuse, running past the time
// budget. The instance that faulted is discarded. Instances are pooled (up
// to the configured pool size, default one per CPU), run one call at a
// time and are replaced freely, so a plugin keeps no state between calls.
// Each instance's memory may grow to the configured limit (default 1024
// pages, 64 MiB); inputs above the input limit (default 4 MiB) fault
// without reaching the plugin; each call has a time budget (default
// 250 ms), enforced by a step counter the host adds at load, which calls
// the host's runedge_host tick import. WASI gives real clocks and a
// cryptographic random source, no arguments, environment, files or
// sockets; stdout is discarded, and the first line of what a call writes
// to stderr goes into its fault message. plugins/ABI.md has the detail
// (with a plugin written by hand in WebAssembly text).
//
// # Normalisation
//
// A plugin may return its JSON formatted as it likes (ABI.md allows
// indentation). The host compacts every output it frames or stores
// ([NormalizeResult], [DecodeRequestOutput]): an SSE data line cannot hold a
// newline, and the stored native request stays byte-stable.
//
// # Guest cost
//
// The guest side of the codec reads with plugins/guestjson, a one-pass
// reader that does not decode what it only copies, and writes by appending:
// encoding/json's reflection costs tens of microseconds per call inside a
// WebAssembly guest, where crossing the boundary costs under 1 µs
// (RATIONALE.md, "What a wazero plugin costs").
package abi
