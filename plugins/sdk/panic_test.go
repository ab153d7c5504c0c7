package sdk

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"
)

// TestAppendPanicLikeFmt checks that a panic's message is what fmt's %v
// made of it, for the values appendPanic prints.
func TestAppendPanicLikeFmt(t *testing.T) {
	for _, v := range []any{
		"boom", errors.New("nil map"), fmt.Errorf("wrapped: %w", errors.New("x")), time.Second,
		true, false, 0, -7, int8(-8), int16(300), int32(-1 << 31), int64(math.MaxInt64),
		uint(7), uint8(255), uint16(65535), uint32(1 << 31), uint64(math.MaxUint64), uintptr(42),
		0.0, 1.5, -2.25, 1e-5, 1e-4, 123456.0, 1e6, 1234567.5, 1e20, 1e21, 1.5e300, math.Inf(1), math.NaN(),
		float32(0.1), float32(3e7), float32(1e21),
	} {
		if got, want := string(appendPanic(nil, v)), fmt.Sprintf("panic: %v", v); got != want {
			t.Errorf("appendPanic(%T %v) = %q, want %q", v, v, got, want)
		}
	}
	if got := string(appendPanic(nil, struct{ A int }{1})); got != "panic: a value of a type the SDK does not print" {
		t.Errorf("appendPanic(struct) = %q", got)
	}
}
