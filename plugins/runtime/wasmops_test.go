package runtime

// Opcodes of the WebAssembly 2.0 binary format that the tests' hand-
// assembled modules use (the rewriter keeps its own in internal/instrument).
const (
	opUnreachable  = 0x00
	opLoop         = 0x03
	opEnd          = 0x0b
	opBrIf         = 0x0d
	opCall         = 0x10
	opLocalGet     = 0x20
	opGlobalGet    = 0x23
	opGlobalSet    = 0x24
	opI32Const     = 0x41
	opI64Const     = 0x42
	opI32Add       = 0x6a
	opI32Sub       = 0x6b
	opI64ExtendU32 = 0xad
	opRefFunc      = 0xd2
	opPrefixMisc   = 0xfc
	blockTypeNone  = 0x40
	miscMemInit    = 8
	miscMemCopy    = 10
	miscMemFill    = 11
)
