// Command faulty is a test plugin whose map_result misbehaves on demand:
// the run's text (the offline provider echoes the user) names the fault.
// map_request is the default mapping of either endpoint. A Responses
// request with "user":"mark-mapped-by" gets "x_mapped_by":"faulty" in every
// object map_result returns for it.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/plugins/compat"
	"github.com/runedge/runedge/plugins/sdk"
)

var sink [][]byte

func init() {
	sdk.Register(sdk.Hooks{
		MapRequest: func(in []byte) ([]byte, error) {
			out, err := compat.MapRequest(in)
			var ie *compat.InputError
			if errors.As(err, &ie) {
				return nil, sdk.InvalidInput(ie.Message, ie.Param, ie.Code)
			}
			return out, err
		},
		MapResult: func(in []byte) ([]byte, error) {
			text := gjson.GetBytes(in, "result.text").Str
			switch {
			case strings.Contains(text, "panic"):
				var m map[string]int
				m["boom"]++ // nil map write: a Go panic
			case strings.Contains(text, "loop"):
				for i := 0; ; i++ {
					if i < 0 {
						break
					}
				}
			case strings.Contains(text, "memory"):
				for {
					sink = append(sink, make([]byte, 1<<20))
				}
			case strings.Contains(text, "garbage"):
				return []byte("this is not JSON"), nil
			case strings.Contains(text, "indent"):
				// Indented output, which plugins/ABI.md allows.
				out, err := compat.MapResult(in)
				if err != nil {
					return nil, err
				}
				var b bytes.Buffer
				if err := json.Indent(&b, out, "", "  "); err != nil {
					return nil, err
				}
				return b.Bytes(), nil
			}
			out, err := compat.MapResult(in)
			if err == nil && gjson.GetBytes(in, "echo.user").Str == "mark-mapped-by" && bytes.HasPrefix(out, []byte("{")) {
				// Marks what this plugin mapped, so a test can tell
				// its objects from the default mapping's.
				out = append([]byte(`{"x_mapped_by":"faulty",`), out[1:]...)
			}
			return out, err
		},
	})
}

func main() {}
