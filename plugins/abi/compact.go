package abi

import (
	"bytes"
	"encoding/json"
)

// compactInto appends raw to b without insignificant white space, checking
// that raw is one JSON value: encoding/json's Compact does both in one pass.
func compactInto(b *bytes.Buffer, raw []byte) error {
	return json.Compact(b, raw)
}
