package instrument

// Builders of hand-assembled test modules, on the encoder the rewriter
// itself uses (wasmbin.go).

// section appends a section with id and content to m.
func section(m []byte, id byte, content []byte) []byte { return appendSection(m, id, content) }

// vec prefixes n encoded items with their count.
func vec(n int, items []byte) []byte { return append(appendU32(nil, uint32(n)), items...) }

// uleb encodes v as unsigned LEB128.
func uleb(v uint64) []byte { return appendU32(nil, uint32(v)) }

// wI32 is the value type i32.
const wI32 = 0x7f
