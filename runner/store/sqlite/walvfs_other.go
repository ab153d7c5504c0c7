//go:build !linux

package sqlite

// walVFS is the default VFS where the WAL-gathering one (walvfs.go) is
// not built.
func walVFS() string { return "" }
