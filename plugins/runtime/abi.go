package runtime

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tetratelabs/wazero/api"

	"github.com/runedge/runedge/plugins/abi"
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
	abi.ExportABIVersion: {nil, []api.ValueType{i32}},
	abi.ExportHooks:      {nil, []api.ValueType{i32}},
	abi.ExportAlloc:      {[]api.ValueType{i32}, []api.ValueType{i32}},
	abi.ExportOutput:     {nil, []api.ValueType{i64}},
}

// optionalExports are the functions a plugin may export: the hooks, which it
// exports when the matching bit of runedge_hooks is set, and the version.
// Whenever one is exported, its type is checked.
var optionalExports = map[string]signature{
	abi.ExportMapRequest: {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
	abi.ExportMapResult:  {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
	abi.ExportMapStream:  {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
	abi.ExportSelfTest:   {nil, []api.ValueType{i32}},
	abi.ExportVersion:    {nil, []api.ValueType{i64}},
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
