package instrument

import (
	"strings"
	"testing"
)

// TestInstrumentRefusesHugeCounts: a few bytes declaring millions of
// entries are refused before wazero, which sizes its slices by the declared
// counts, sees them. Before, the data section below made the process
// allocate gigabytes and die.
func TestInstrumentRefusesHugeCounts(t *testing.T) {
	header := []byte("\x00asm\x01\x00\x00\x00")
	huge := []byte{0x80, 0x80, 0x80, 0x80, 0x01} // 2^28
	body := func(locals ...byte) []byte {
		b := append(locals, opEnd)
		return append(uleb(uint64(len(b))), b...)
	}
	withCode := func(code []byte) []byte {
		m := section(header, 1, vec(1, []byte{0x60, 0, 0}))
		m = section(m, 3, vec(1, []byte{0}))
		return section(m, 10, vec(1, code))
	}
	for _, tc := range []struct {
		name string
		wasm []byte
		want string
	}{
		{"data segments", section(header, 11, huge), "entries declared in 5 bytes"},
		{"functions", section(header, 3, huge), "entries declared"},
		{"tables", section(header, 4, huge), "entries declared"},
		{"data count", section(header, 12, huge), "data segments declared"},
		{"data bytes", section(header, 11, append([]byte{1, 1}, huge...)), "bytes declared"},
		{"locals", withCode(body(append(append([]byte{1}, huge...), wI32)...)), "more than 50000 locals"},
		{"local groups", withCode(body(huge...)), "groups of locals declared"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Module(tc.wasm)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("instrument = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
