// Package sysmon keeps the Go runtime's monitor thread (sysmon) from its
// deep sleep, which a host serving one request at a time paid for on every
// request.
//
// sysmon sleeps 20 µs between its rounds while a goroutine runs, and backs
// off to 10 ms only after 50 rounds in which it had nothing to do. When it
// finds every P idle it sleeps deeply instead, until a timer or the next
// system call wakes it, and a wake by a system call starts it over at
// 20 µs. A host at one connection goes idle between any two requests, and
// every request makes system calls (its socket's, and SQLite's `pwrite`s
// and `fcntl` locks), so every request woke sysmon, which then polled every
// 20 µs for the whole request: on the one core bench-edge pins runedge to,
// each round is two context switches taken from the request. In a `perf`
// profile of the one-connection `make run` target that was 15% of the
// process's samples in sysmon, and a fifth of them in the kernel's
// finishing of task switches. At 32 connections the P is never idle,
// sysmon is at 10 ms, and none of this shows: part of why a lone request
// cost three to five times one among 32.
//
// The runtime's one switch for it is GODEBUG's schedtrace: with it set,
// sysmon never sleeps deeply (it must print on time), so it backs off to
// 10 ms and stays there. It is read once, at the process's start, so the
// serving command runs itself again (the same process, execve) with
// schedtrace set to its largest value, 2³¹−1 ms: a scheduler line on
// standard error every 24.8 days, the first at start on a machine up
// longer than that (the runtime counts from boot), and a scheduler dump
// before the stack traces of a fatal error. An operator who sets schedtrace in GODEBUG keeps it
// (schedtrace=0 turns this off).
package sysmon

import (
	"os"
	"strings"
)

// Setting is the GODEBUG setting the serving process runs with.
const Setting = "schedtrace=2147483647"

// Env returns environ with Setting added to GODEBUG, and false when
// GODEBUG names schedtrace already (the operator's, or this package's after
// the process ran itself again), so that there is nothing to do.
func Env(environ []string) ([]string, bool) {
	out := make([]string, 0, len(environ)+1)
	found := false
	for _, kv := range environ {
		v, ok := strings.CutPrefix(kv, "GODEBUG=")
		if !ok {
			out = append(out, kv)
			continue
		}
		for _, f := range strings.Split(v, ",") {
			if strings.HasPrefix(strings.TrimSpace(f), "schedtrace=") {
				return nil, false
			}
		}
		if !found {
			found = true
			if v != "" {
				v += ","
			}
			kv = "GODEBUG=" + v + Setting
		}
		out = append(out, kv)
	}
	if !found {
		out = append(out, "GODEBUG="+Setting)
	}
	return out, true
}

// Exec runs the process's own binary again in its place, with its
// arguments and Env's environment, when Env says so. It returns only when
// it did not: nil when there was nothing to do, or the error that stopped
// it (the process then goes on as it is, with the runtime's default).
func Exec() error {
	env, ok := Env(os.Environ())
	if !ok {
		return nil
	}
	return execSelf(env)
}
