package runtime

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tetratelabs/wazero/api"
)

// abiVersion is the version of plugins/ABI.md this host implements.
const abiVersion = 1

// Names of the guest exports, as defined by plugins/ABI.md.
const (
	exportMemory     = "memory"
	exportABIVersion = "runedge_abi_version"
	exportHooks      = "runedge_hooks"
	exportAlloc      = "runedge_alloc"
	exportMapRequest = "runedge_map_request"
	exportMapResult  = "runedge_map_result"
	exportMapStream  = "runedge_map_stream"
	exportSelfTest   = "runedge_self_test"
	exportOutput     = "runedge_output"
	exportVersion    = "runedge_version"
)

// Bits of the runedge_hooks bitmap.
const (
	bitMapRequest int32 = 1 << 0
	bitMapResult  int32 = 1 << 1
	bitSelfTest   int32 = 1 << 2
	bitMapStream  int32 = 1 << 3
	knownHookBits       = bitMapRequest | bitMapResult | bitSelfTest | bitMapStream
	// mappingHookBits are the hooks that map something; a plugin needs one.
	mappingHookBits = bitMapRequest | bitMapResult | bitMapStream
)

// Statuses a hook returns.
const (
	statusOK       uint32 = 0
	statusInvalid  uint32 = 1
	statusInternal uint32 = 2
)

// signature is the type a function export must have.
type signature struct {
	params, results []api.ValueType
}

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

// requiredExports are the functions every plugin exports.
var requiredExports = map[string]signature{
	exportABIVersion: {nil, []api.ValueType{i32}},
	exportHooks:      {nil, []api.ValueType{i32}},
	exportAlloc:      {[]api.ValueType{i32}, []api.ValueType{i32}},
	exportOutput:     {nil, []api.ValueType{i64}},
}

// optionalExports are the functions a plugin may export: the hooks, which it
// exports when the matching bit of runedge_hooks is set, and the version.
// Whenever one is exported, its type is checked.
var optionalExports = map[string]signature{
	exportMapRequest: {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
	exportMapResult:  {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
	exportMapStream:  {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
	exportSelfTest:   {nil, []api.ValueType{i32}},
	exportVersion:    {nil, []api.ValueType{i64}},
}

// mismatch describes how def differs from s, or returns "" when it matches.
func (s signature) mismatch(def api.FunctionDefinition) string {
	if slices.Equal(def.ParamTypes(), s.params) && slices.Equal(def.ResultTypes(), s.results) {
		return ""
	}
	return fmt.Sprintf("has type %s, want %s", typeString(def.ParamTypes(), def.ResultTypes()), typeString(s.params, s.results))
}

// typeString renders a function type the way plugins/ABI.md writes it,
// e.g. "(i32, i32) -> i32".
func typeString(params, results []api.ValueType) string {
	names := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return strings.Join(s, ", ")
	}
	out := "(" + names(params) + ") -> "
	if len(results) == 1 {
		return out + names(results)
	}
	return out + "(" + names(results) + ")"
}
