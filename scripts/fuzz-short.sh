#!/usr/bin/env bash
# fuzz-short.sh GO FUZZTIME package:Target... — runs each fuzz target for
# FUZZTIME. A target fails the run when it writes a failing input to its
# testdata/fuzz folder (every new failure does: a panic, a failed check, a
# hang), or when a seed or an input that once failed fails again. Go 1.26's fuzz coordinator can also end a clean run with a bare
# "context deadline exceeded" at the fuzztime boundary and no input
# (golang/go#75804, fixed in Go 1.27): such a run is retried once, and a
# second one is reported and passed over, since there is nothing to
# reproduce.
set -uo pipefail
go=$1 fuzztime=$2
shift 2
inputs() { ls "$1" 2>/dev/null | sort; }
for t in "$@"; do
	pkg=${t%%:*} target=${t#*:}
	dir=$pkg/testdata/fuzz/$target
	# The seeds and the inputs that once failed must pass as they are: a
	# failure there writes no new input, so it is checked on its own.
	"$go" test -count=1 -run "^${target}\$" "$pkg" || exit 1
	for attempt in 1 2; do
		echo "fuzz $t for $fuzztime"
		before=$(inputs "$dir")
		if "$go" test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"; then
			break
		fi
		if [ "$(inputs "$dir")" != "$before" ]; then
			echo "fuzz $t: failing input written to $dir" >&2
			exit 1
		fi
		echo "fuzz $t: failed without a failing input (golang/go#75804, the fuzztime deadline race)" >&2
		[ "$attempt" = 2 ] && echo "fuzz $t: twice; passed over" >&2
	done
done
