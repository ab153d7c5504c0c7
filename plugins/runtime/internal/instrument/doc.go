// Package instrument is the load-time WebAssembly rewriter of the plugin
// runtime: Module adds a fuel counter, its checks at function entries and
// loop headers, the tick import that checks a call's deadline, and
// chunked, charged helpers for bulk memory operations; it joins data
// segments and refuses modules whose declared counts would exhaust memory.
//
// It is a package of its own because it is a binary-format transformer
// with no runtime state: it is tested (and fuzzed, through
// plugins/runtime's FuzzInstrument, which runs the rewritten modules under
// the runtime's budget) on bytes alone. It is internal: nothing but
// plugins/runtime compiles modules with it.
package instrument
