// Package metadata checks the metadata a client sends, as OpenAI checks
// it, for every endpoint that takes it (/v1/responses, a WebSocket turn,
// /v1/chat/completions, /v1/conversations): null or absent, or an object of
// at most MaxKeys members whose keys are at most MaxKeyChars characters and
// whose values are strings of at most MaxValueChars characters.
//
// The check is on what the client sent: runedge's own metadata.service,
// merged into Response objects, is not the client's and is not counted.
// Callers answer an error with 400 invalid_body naming the field
// (filters/apierr).
package metadata

import (
	"errors"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// OpenAI's limits on metadata.
const (
	MaxKeys       = 16
	MaxKeyChars   = 64
	MaxValueChars = 512
)

var (
	errShape = errors.New("metadata must be an object of string values")
	errKeys  = errors.New("metadata has at most 16 keys")
	errSizes = errors.New("metadata keys are at most 64 characters and values at most 512")
)

// Check checks v, the metadata member of a request body as gjson reads
// it (absent: the zero Result).
func Check(v gjson.Result) error {
	if !v.Exists() || v.Type == gjson.Null {
		return nil
	}
	if !v.IsObject() {
		return errShape
	}
	var err error
	n := 0
	v.ForEach(func(k, val gjson.Result) bool {
		switch n++; {
		case val.Type != gjson.String:
			err = errShape
		case n > MaxKeys:
			err = errKeys
		case utf8.RuneCountInString(k.Str) > MaxKeyChars || utf8.RuneCountInString(val.Str) > MaxValueChars:
			err = errSizes
		}
		return err == nil
	})
	return err
}

// CheckJSON checks raw, a metadata value on its own (nil: absent).
func CheckJSON(raw []byte) error {
	if len(raw) == 0 {
		return nil
	}
	if !gjson.ValidBytes(raw) {
		return errShape
	}
	return Check(gjson.ParseBytes(raw))
}
