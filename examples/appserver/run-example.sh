#!/usr/bin/env bash
# make example: runedge and the example app server together. runedge gets
# the token as SERVICE_TOKEN, the app server as RUNEDGE_TOKEN; the browser
# only ever talks to the app server. Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNEDGE_ADDR=${RUNEDGE_ADDR:-127.0.0.1:8090}
APP_ADDR=${APP_ADDR:-127.0.0.1:3000}
token=${SERVICE_TOKEN:-}
if [ -z "$token" ]; then
	token="rk_$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')"
fi

SERVICE_TOKEN="$token" ./bin/runedge serve --config examples/appserver/runedge.yaml --listen "$RUNEDGE_ADDR" &
runedge_pid=$!
trap 'kill "$runedge_pid" 2>/dev/null || true; wait "$runedge_pid" 2>/dev/null || true' EXIT

# The first start compiles the plugins, which takes a few seconds.
for _ in $(seq 1 300); do
	kill -0 "$runedge_pid" 2>/dev/null || { echo "runedge did not start" >&2; exit 1; }
	if curl -sf -o /dev/null -H "Authorization: Bearer $token" "http://$RUNEDGE_ADDR/v1/models"; then
		break
	fi
	sleep 0.2
done

cat <<MSG

  runedge      http://$RUNEDGE_ADDR   (token, server-side only: $token)
  app server   http://$APP_ADDR        <- open this

  Log in as ada / analytical-engine (tenant acme) or grace / compiler-1952 (tenant navy).
  Run history: curl -s "http://$RUNEDGE_ADDR/runner/v1/runs?limit=5" \\
                 -H "Authorization: Bearer $token" -H "x-service-tenant-id: acme"

MSG
RUNEDGE_TOKEN="$token" ./bin/appserver -listen "$APP_ADDR" -runedge "http://$RUNEDGE_ADDR" \
	-users examples/appserver/users.json
