#!/usr/bin/env bash
# The official JavaScript SDKs against a real runedge (`make test-node`):
# npm packages from the lockfile, then node's test runner. bin/runedge and
# the plugins must be built (the make target does that).
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund </dev/null
npm test </dev/null
