package runtime

import "strconv"

// Hook names a mapping hook a plugin may implement.
type Hook int

const (
	// MapRequest maps an incoming request body to the runner's form.
	MapRequest Hook = iota
	// MapResult maps a runner result to the response body for the client.
	MapResult
)

// hookCount is the number of Hook values.
const hookCount = 2

// String returns the hook's ABI name without the runedge_ prefix, the form
// used in errors and metrics.
func (h Hook) String() string {
	switch h {
	case MapRequest:
		return "map_request"
	case MapResult:
		return "map_result"
	}
	return "hook(" + strconv.Itoa(int(h)) + ")"
}

// valid reports whether h is one of the defined hooks.
func (h Hook) valid() bool { return h >= 0 && h < hookCount }

// export is the name of the guest function implementing h.
func (h Hook) export() string {
	if h == MapRequest {
		return exportMapRequest
	}
	return exportMapResult
}

// bit is h's bit in the runedge_hooks bitmap.
func (h Hook) bit() int32 {
	if h == MapRequest {
		return bitMapRequest
	}
	return bitMapResult
}
