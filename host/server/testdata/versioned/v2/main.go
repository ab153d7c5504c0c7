// Command v2 is the versioned test plugin at version v2.
package main

import "github.com/runedge/runedge/plugins/plugintest/versioned"

func init() { versioned.Register("v2") }

func main() {}
