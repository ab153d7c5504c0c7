//go:build !unix

package sysmon

import "errors"

func execSelf([]string) error { return errors.ErrUnsupported }
