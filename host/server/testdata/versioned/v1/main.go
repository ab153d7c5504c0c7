// Command v1 is the versioned test plugin at version v1.
package main

import "github.com/runedge/runedge/plugins/plugintest/versioned"

func init() { versioned.Register("v1") }

func main() {}
