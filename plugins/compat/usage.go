package compat

import nativewire "github.com/runedge/runedge/runner/native"

// Usage is the token accounting of one run, in the native result's terms.
// A Response writes it with respjson.AppendUsage.
type Usage = nativewire.Usage
