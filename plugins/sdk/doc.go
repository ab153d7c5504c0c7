// Package sdk lets a plugin written in Go implement the runedge plugin ABI
// (see plugins/ABI.md) by registering plain Go functions.
//
// A plugin is a wasip1 reactor built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o openai.wasm ./plugins/openai
//
// and its whole boilerplate is:
//
//	package main
//
//	import "github.com/runedge/runedge/plugins/sdk"
//
//	func init() { sdk.Register(sdk.Hooks{MapResult: mapResult}) }
//
//	func main() {}
//
// Hooks lists the hooks; MapStreamFunc builds the streaming one from a
// function on text, so that a plugin handles no JSON.
//
// The ABI exports (runedge_abi_version, runedge_alloc, the hooks, ...) live in
// this package behind the wasip1 build tag, so importing it is all a plugin
// needs; the rest of the package builds on every platform so that mapping code
// and this package's own logic can be tested natively.
package sdk
