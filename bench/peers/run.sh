#!/usr/bin/env bash
# Runs the benchmark of jobstore beside river (PostgreSQL) and asynq (Redis).
#
#   bench/peers/run.sh [flags of the Go command, e.g. -jobs 2000 -rounds 3]
#
# As root, installs Debian's postgresql and redis-server when missing. Starts
# a PostgreSQL (fsync and synchronous_commit on) and a Redis (appendonly,
# appendfsync always) in a temporary directory beside this script, on the
# repository's disk, on loopback ports; runs the Go command; stops both at
# exit. A server that cannot be had is left out, and the command says so.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
pg_port=${PEERS_PG_PORT:-55432}
redis_port=${PEERS_REDIS_PORT:-56379}

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	missing=()
	compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || missing+=(postgresql)
	command -v redis-server >/dev/null || missing+=(redis-server)
	if [ ${#missing[@]} -gt 0 ]; then
		echo "installing ${missing[*]}" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 || true
		apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}" >&2 ||
			echo "could not install ${missing[*]}: those peers are skipped" >&2
	fi
fi

tmp=$(mktemp -d "$here/.servers.XXXXXX")
chmod 755 "$tmp"
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
pg_data=$tmp/pg
as_pg=()
if [ "$(id -u)" = 0 ]; then
	as_pg=(runuser -u postgres --) # PostgreSQL refuses to run as root
fi

stop() {
	if [ -f "$pg_data/postmaster.pid" ]; then
		"${as_pg[@]}" "$pg_bin/pg_ctl" -D "$pg_data" -m fast -w stop >/dev/null || true
	fi
	if [ -f "$tmp/redis.pid" ]; then
		kill "$(cat "$tmp/redis.pid")" 2>/dev/null || true
		while [ -f "$tmp/redis.pid" ] && kill -0 "$(cat "$tmp/redis.pid")" 2>/dev/null; do sleep 0.1; done
	fi
	rm -rf "$tmp"
}
trap stop EXIT

args=()
if [ -n "$pg_bin" ] && [ -x "$pg_bin/postgres" ]; then
	mkdir "$pg_data"
	[ "$(id -u)" = 0 ] && chown postgres: "$pg_data"
	if "${as_pg[@]}" "$pg_bin/initdb" -D "$pg_data" -U postgres -A trust >"$tmp/initdb.log" 2>&1 &&
		"${as_pg[@]}" "$pg_bin/pg_ctl" -D "$pg_data" -l "$pg_data/log" -w start -o \
			"-p $pg_port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$pg_data \
			 -c fsync=on -c synchronous_commit=on -c full_page_writes=on" >/dev/null; then
		args+=(-pg "postgres://postgres@127.0.0.1:$pg_port/postgres?sslmode=disable" -pg-pidfile "$pg_data/postmaster.pid")
	else
		echo "river: skipped: PostgreSQL did not start (see above)" >&2
		cat "$tmp/initdb.log" "$pg_data/log" 2>/dev/null | tail -n 5 >&2
	fi
fi
if command -v redis-server >/dev/null; then
	mkdir "$tmp/redis"
	if redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$tmp/redis" \
		--appendonly yes --appendfsync always --save '' \
		--daemonize yes --pidfile "$tmp/redis.pid" --logfile "$tmp/redis/log"; then
		for _ in $(seq 50); do [ -s "$tmp/redis.pid" ] && break; sleep 0.1; done
		args+=(-redis "127.0.0.1:$redis_port" -redis-pidfile "$tmp/redis.pid")
	fi
fi

cd "$here"
go run . -dir "$tmp" "${args[@]}" "$@"
