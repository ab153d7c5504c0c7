//go:build unix

package sysmon

import (
	"os"
	"syscall"
)

func execSelf(env []string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return syscall.Exec(exe, os.Args, env)
}
