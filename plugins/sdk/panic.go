package sdk

import "strconv"

// appendPanic appends "panic: " and the value a hook panicked with, written
// as fmt's %v writes the values panics usually carry: errors (the runtime's
// own, such as an index out of range), strings, Stringers, booleans and
// numbers. Other values are named by kind only: the SDK does without fmt,
// whose reflection was a tenth of every guest's code (RATIONALE.md, "Peak
// RSS").
func appendPanic(dst []byte, r any) []byte {
	dst = append(dst, "panic: "...)
	switch v := r.(type) {
	case error:
		return append(dst, v.Error()...)
	case interface{ String() string }:
		return append(dst, v.String()...)
	case string:
		return append(dst, v...)
	case bool:
		return strconv.AppendBool(dst, v)
	case int:
		return strconv.AppendInt(dst, int64(v), 10)
	case int8:
		return strconv.AppendInt(dst, int64(v), 10)
	case int16:
		return strconv.AppendInt(dst, int64(v), 10)
	case int32:
		return strconv.AppendInt(dst, int64(v), 10)
	case int64:
		return strconv.AppendInt(dst, v, 10)
	case uint:
		return strconv.AppendUint(dst, uint64(v), 10)
	case uint8:
		return strconv.AppendUint(dst, uint64(v), 10)
	case uint16:
		return strconv.AppendUint(dst, uint64(v), 10)
	case uint32:
		return strconv.AppendUint(dst, uint64(v), 10)
	case uint64:
		return strconv.AppendUint(dst, v, 10)
	case uintptr:
		return strconv.AppendUint(dst, uint64(v), 10)
	case float32:
		return strconv.AppendFloat(dst, float64(v), 'g', -1, 32)
	case float64:
		return strconv.AppendFloat(dst, v, 'g', -1, 64)
	}
	return append(dst, "a value of a type the SDK does not print"...)
}
