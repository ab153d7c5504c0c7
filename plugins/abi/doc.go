// Package abi is the runedge plugin ABI in Go: the numbers (version, export
// names, hook bits, statuses) and, for each hook, the types of its input and
// output with the one codec that writes and reads them. The host's stages
// (filters/mapping, filters/translate), its runtime (plugins/runtime), the
// plugin CLI (runedge plugin check), the guest SDK (plugins/sdk) and the
// default mappings (plugins/compat) all encode and decode envelopes here, so
// the envelopes cannot drift apart; plugins/ABI.md is the same contract in
// prose, for plugins written in other languages.
//
// # Calls
//
// A plugin is a WebAssembly module exporting [ExportABIVersion] (returning
// [Version]), [ExportHooks] (a bitmap of [HookMapRequest], [HookMapResult],
// [HookSelfTest], [HookMapStream]), [ExportAlloc], [ExportOutput] and one
// export per hook. A hook takes its input as JSON bytes and returns a status:
// [StatusOK] with the mapped bytes, [StatusInvalid] with an [InputError] body
// (the client's fault: HTTP 400), or [StatusFailed] with a message for
// operators (a fault: HTTP 500 plugin_error).
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
// [DecodeInputError]; a guest reads inputs with [ParseRequestInput],
// [ParseResultInput], [ParseStreamInput] and writes outputs with
// [StreamOutput.AppendJSON], [InputError.AppendJSON] (a map_request output is
// written by the mapping, see plugins/compat). Whatever the host's decoders
// refuse fails the request with HTTP 500 plugin_error naming the plugin, and
// the run is recorded failed with reason plugin_error.
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
// WebAssembly guest, ten times the cost of the boundary itself.
package abi
