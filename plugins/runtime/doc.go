// Package runtime is the host side of runedge's mapping plugins: it compiles
// WebAssembly plugins with wazero, checks them against the ABI described in
// plugins/ABI.md, and calls their hooks through a bounded pool of instances.
//
// The costs that shape it (see shared/notes/wasm-measurements.md): compiling
// a Go plugin takes over a second, so compiled code is cached on disk and
// shared in-process; instantiating takes milliseconds, so instances are
// pooled and reused; a call into a Go guest costs tens of microseconds and
// cannot be preempted, so inputs are capped in size and every plugin is
// rewritten at load to check a per-call time budget (instrument.go, and
// plugins/ABI.md, "Time budget"). A guest that traps, runs out of time or
// misbehaves may have left its runtime corrupt, so the instance is
// discarded and a fresh one made on demand.
package runtime
