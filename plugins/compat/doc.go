// Package compat maps between OpenAI-compatible request/reply bodies
// (chat.completions and responses) and runedge's native run request and
// result.
//
// The same code runs in two places: natively in the host (stream framing, the
// response.created snapshot, benchmarks) and inside the default mapping
// plugins compiled to WebAssembly (GOOS=wasip1), where every instruction and
// allocation costs roughly ten times more. That is why the package reads its
// (already validated) input in a single pass with a small reader of its own
// (see value), writes by appending to byte slices, and avoids encoding/json,
// reflection, syscalls and the clock: times and ids always arrive in the
// input. It imports no other runedge package so that a plugin built from it
// stays small and self-contained.
//
// The two hooks are [MapRequest] and [MapResult]; their input and output
// envelopes are described on each function. Client mistakes come back as
// *[InputError], anything else as a plain error.
package compat
