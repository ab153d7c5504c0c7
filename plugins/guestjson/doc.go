// Package guestjson is the one JSON reader and writer of runedge's guest
// code: the plugin SDK (plugins/sdk), the ABI codec (plugins/abi) and the
// default mappings (plugins/compat) all read hook inputs and write hook
// outputs with it.
//
// It is written for the WebAssembly guest, where every instruction and
// allocation costs roughly ten times what it costs natively: it imports
// nothing but the standard library's strings, strconv and unicode packages,
// reads in one pass without decoding what is only copied ([Value],
// [AppendStringValue]) and writes by appending to byte slices. Its input is
// JSON the host has already validated; malformed input never makes it panic,
// loop or write invalid JSON. It is fuzzed against encoding/json.
//
// Why not gjson, which the host uses: see README.md.
package guestjson
