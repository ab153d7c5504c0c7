#!/usr/bin/env bash
# The browser tests (`make test-browser`): the app server example
# (chat.test.mjs) and runedge's operator page (operator.test.mjs). It
# installs what it needs on a fresh machine: Debian's chromium when
# /usr/bin/chromium is missing (playwright cannot download a browser here),
# and playwright-core from the lockfile. bin/runedge, bin/appserver and the
# plugins must be built (the make target does that).
set -euo pipefail
cd "$(dirname "$0")"
if [ -z "${CHROMIUM:-}" ] && [ ! -x /usr/bin/chromium ]; then
	echo "test-browser: installing Debian's chromium" >&2
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
	$sudo apt-get update -qq </dev/null
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium </dev/null
fi
npm ci --no-audit --no-fund </dev/null
npm test </dev/null
