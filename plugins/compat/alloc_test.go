package compat

import (
	"strings"
	"testing"
)

// A mapping call allocates its output and nothing else, however large and
// escape-laden the body: in the WebAssembly guest every allocation is
// expensive and feeds its garbage collector.
func TestMappingAllocatesOnlyItsOutput(t *testing.T) {
	for name, in := range map[string][]byte{
		"chat request":      envelope(EndpointChat, largeChatBody),
		"responses request": envelope(EndpointResponses, largeResponsesBody),
		"chat result":       mustRead(t, "testdata/result/chat_escapes.json"),
		"responses result":  mustRead(t, "testdata/result/responses_echoed_settings.json"),
	} {
		hook := MapRequest
		if strings.HasSuffix(name, "result") {
			hook = MapResult
		}
		if _, err := hook(in); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := testing.AllocsPerRun(20, func() { _, _ = hook(in) }); n != 1 {
			t.Errorf("%s: %.0f allocations per call, want 1", name, n)
		}
	}
}
