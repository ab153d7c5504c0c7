package runtime

import (
	"testing"
	"time"
)

func BenchmarkZZ(b *testing.B) {
	for _, in := range []struct {
		name string
		hook Hook
		in   []byte
	}{{"echo100B", MapRequest, benchInput(100)}, {"map100B", MapResult, mapInput(100)}, {"map7KB", MapResult, mapInput(7000)}} {
		for range 5 {
			b.Run("none/"+in.name, func(b *testing.B) {
				inst := benchInstance(b, false, false)
				benchRunHook(b, inst, in.hook, in.in, func() {}, -1)
			})
			b.Run("fuel/"+in.name, func(b *testing.B) {
				
				inst := benchInstance(b, true, false)
				benchRunHook(b, inst, in.hook, in.in, func() {}, 250*time.Millisecond)
			})
			b.Run("hybrid/"+in.name, func(b *testing.B) {
				zzHybrid = true
				inst := benchInstance(b, true, false)
				zzHybrid = false
				benchRunHook(b, inst, in.hook, in.in, func() {}, 250*time.Millisecond)
			})
		}
	}
}
