#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for tests and benchmarks.
#
#   scripts/testdb.sh start DIR   # initdb in DIR, start on a free loopback
#                                 # port; prints the DSN on stdout
#   scripts/testdb.sh stop DIR    # stop it and remove DIR
#
# The cluster belongs to the postgres user (initdb refuses root), listens on
# 127.0.0.1 only with password authentication (scram-sha-256) so tests can
# check a wrong password, and keeps its socket inside DIR.
set -euo pipefail

cmd=${1:?usage: testdb.sh start|stop DIR}
dir=${2:?usage: testdb.sh start|stop DIR}
bin=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$bin/initdb" ] || { echo "testdb.sh: PostgreSQL binaries not found (install postgresql; PG_BIN overrides)" >&2; exit 1; }

as_pg() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case $cmd in
start)
	mkdir -p "$dir"
	if [ "$(id -u)" = 0 ] && ! runuser -u postgres -- test -x "$(dirname "$dir")"; then
		echo "testdb.sh: the postgres user cannot enter $(dirname "$dir") (chmod 711 it)" >&2
		exit 1
	fi
	[ "$(id -u)" = 0 ] && chown postgres: "$dir"
	chmod 700 "$dir"
	pass=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
	echo "$pass" >"$dir/pw"
	[ "$(id -u)" = 0 ] && chown postgres: "$dir/pw"
	as_pg "$bin/initdb" -D "$dir/data" -U postgres --pwfile="$dir/pw" \
		--auth-local=trust --auth-host=scram-sha-256 -E UTF8 >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; exit 1; }
	for _ in $(seq 50); do
		port=$((20000 + RANDOM % 40000))
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
		if as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 start \
			-o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300" >/dev/null 2>&1; then
			echo "$port" >"$dir/port"
			echo "postgres://postgres:$pass@127.0.0.1:$port/postgres?sslmode=disable"
			exit 0
		fi
	done
	cat "$dir/server.log" >&2
	exit 1
	;;
stop)
	[ -d "$dir/data" ] && as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
	rm -rf "$dir"
	;;
*)
	echo "usage: testdb.sh start|stop DIR" >&2
	exit 2
	;;
esac
