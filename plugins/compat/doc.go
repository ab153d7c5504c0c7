// Package compat maps between OpenAI-compatible request/reply bodies
// (chat.completions and responses) and runedge's native run request and
// result.
//
// It runs inside the default mapping plugin compiled to WebAssembly
// (GOOS=wasip1), where every instruction and allocation costs roughly ten
// times more than natively. That is why the package reads its (already
// validated) input in a single pass with the ABI's codec (plugins/abi) and the
// guests' reader (plugins/guestjson), writes by appending to byte slices, and
// avoids encoding/json, reflection, syscalls and the clock: times and ids
// always arrive in the input.
//
// The two hooks are [MapRequest] and [MapResult]; their input and output
// envelopes are described on each function. Client mistakes come back as
// *[InputError], anything else as a plain error.
package compat
