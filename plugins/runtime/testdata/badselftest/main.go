// Command badselftest is a test plugin whose self-test fails, so that
// loading it must fail.
package main

import (
	"errors"

	"github.com/runedge/runedge/plugins/sdk"
)

func init() {
	sdk.Register(sdk.Hooks{
		MapRequest: func(in []byte) ([]byte, error) { return in, nil },
		SelfTest:   func() error { return errors.New("golden case mismatch") },
	})
}

func main() {}
