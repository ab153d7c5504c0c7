// Package versioned is a test plugin whose every output carries its
// version, so a test can tell whether one reply was produced by one plugin
// version throughout: map_request puts the version in the echo, map_result
// stamps "<request version>/<result version>" into the reply, map_stream
// prefixes each emitted piece with "[version]". Tests build it into two
// plugins (host/server/testdata/versioned/v1, v2) and swap them under load.
package versioned

import (
	"errors"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/runedge/runedge/plugins/compat"
	"github.com/runedge/runedge/plugins/sdk"
)

// Register registers the hooks of version v.
func Register(v string) {
	sdk.Register(sdk.Hooks{
		Version: v,
		MapRequest: func(in []byte) ([]byte, error) {
			out, err := compat.MapRequest(in)
			var ie *compat.InputError
			if errors.As(err, &ie) {
				return nil, sdk.InvalidInput(ie.Message, ie.Param, ie.Code)
			}
			if err != nil {
				return nil, err
			}
			return sjson.SetBytes(out, "echo.stamp", v)
		},
		MapResult: func(in []byte) ([]byte, error) {
			out, err := compat.MapResult(in)
			if err != nil {
				return nil, err
			}
			stamp := gjson.GetBytes(in, "echo.stamp").Str + "/" + v
			if gjson.GetBytes(in, "endpoint").Str == "responses" {
				return sjson.SetBytes(out, "metadata.stamp", stamp)
			}
			return sjson.SetBytes(out, "system_fingerprint", stamp)
		},
		MapStream: func(in []byte) ([]byte, error) {
			text := gjson.GetBytes(in, "text").Str
			out, err := sjson.SetBytes([]byte(`{"hold":""}`), "emit", "["+v+"]"+text)
			return out, err
		},
	})
}
