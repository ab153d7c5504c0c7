// Package runtime is the host side of runedge's mapping plugins: it compiles
// WebAssembly plugins with wazero, checks them against the ABI described in
// plugins/ABI.md, and calls their hooks through a bounded pool of instances.
//
// The costs that shape it (measured in RATIONALE.md, "What a wazero plugin
// costs"): compiling the default Go plugin takes about 1.5 s, so compiled
// code is cached on disk (a restart loads it in about 160 ms) and shared
// in-process; an instance takes about 4.5 ms to make, so instances are
// pooled and reused; crossing the boundary costs under 1 µs, but a mapping
// in a Go guest runs about 10x slower than native (20-30 µs for a small
// chat request) and cannot be preempted, so inputs are capped in size and
// every plugin is rewritten at load to check a per-call time budget
// (internal/instrument, and plugins/ABI.md, "Time budget"). A guest that
// traps, runs out of time or misbehaves may have left its runtime corrupt, so the instance is
// discarded and a fresh one made on demand.
package runtime
