package runtime

import (
	"strconv"

	"github.com/runedge/runedge/plugins/abi"
)

// Hook names a mapping hook a plugin may implement.
type Hook int

const (
	// MapRequest maps an incoming request body to the runner's form.
	MapRequest Hook = iota
	// MapResult maps a runner result to the response body for the client.
	MapResult
	// MapStream maps a batch of streamed text; its input and output are
	// the JSON objects described in plugins/ABI.md.
	MapStream
)

// hookCount is the number of Hook values.
const hookCount = 3

// hookABI describes each hook in the terms of plugins/ABI.md.
var hookABI = [hookCount]struct {
	name   string // the export's name without the runedge_ prefix
	export string
	bit    int32 // in the runedge_hooks bitmap
}{
	MapRequest: {"map_request", abi.ExportMapRequest, abi.HookMapRequest},
	MapResult:  {"map_result", abi.ExportMapResult, abi.HookMapResult},
	MapStream:  {"map_stream", abi.ExportMapStream, abi.HookMapStream},
}

// String returns the hook's ABI name without the runedge_ prefix, the form
// used in errors and metrics.
func (h Hook) String() string {
	if h.valid() {
		return hookABI[h].name
	}
	return "hook(" + strconv.Itoa(int(h)) + ")"
}

// valid reports whether h is one of the defined hooks.
func (h Hook) valid() bool { return h >= 0 && h < hookCount }

// export is the name of the guest function implementing h, a valid hook.
func (h Hook) export() string { return hookABI[h].export }

// bit is h's bit in the runedge_hooks bitmap; h must be valid.
func (h Hook) bit() int32 { return hookABI[h].bit }
