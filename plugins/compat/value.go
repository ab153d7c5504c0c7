package compat

import "github.com/runedge/runedge/plugins/guestjson"

// value is a JSON value of a hook's input, read with the guests' one reader
// (plugins/guestjson).
type value = guestjson.Value
