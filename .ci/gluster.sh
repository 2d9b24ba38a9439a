#!/usr/bin/env bash
# The GlusterFS server of the two-host kit (twohost_kit_linux_test.go): one
# glusterd, started directly (no systemd), serving a one-brick volume on this
# machine. The tests mount it themselves, twice per test: two FUSE clients of
# one volume are two hosts.
#
#   bash .ci/gluster.sh start    # idempotent: glusterd, the volume, started; prints the time of each step
#   bash .ci/gluster.sh status   # exit 0 when the volume answers a mount
#   bash .ci/gluster.sh stop     # unmount every client of the volume, delete it, stop glusterd
#
# Needs root and Debian's glusterfs-server and glusterfs-client (.ci/install.sh).
# The volume and brick names are the tests' defaults; JOBSTORE_GLUSTER_VOLUME
# names another volume (the tests read the same variable).
set -euo pipefail

volume=${JOBSTORE_GLUSTER_VOLUME:-jobstore-kit}
state=/var/lib/jobstore-kit            # the brick and glusterd's pid file; nothing else lives here
brick=$state/brick-$volume
pidfile=$state/glusterd.pid
log=/var/log/glusterfs/glusterd.log
cli=(gluster --mode=script)

say() { printf 'gluster.sh: %s\n' "$*"; }
die() { printf 'gluster.sh: %s\n' "$*" >&2; exit 1; }
now() { echo "$EPOCHREALTIME"; }
took() { awk -v what="$1" -v t0="$2" -v t1="$(now)" 'BEGIN { printf "gluster.sh: %-16s %5.1f s\n", what, t1 - t0 }'; }

# glusterd_listens is quick where the CLI takes 3 s to report no daemon.
glusterd_listens() { timeout 1 bash -c '</dev/tcp/127.0.0.1/24007' 2>/dev/null; }
glusterd_answers() { glusterd_listens && timeout 10 "${cli[@]}" pool list >/dev/null 2>&1; }
volume_exists() { timeout 20 "${cli[@]}" volume info "$volume" >/dev/null 2>&1; }
# brick_online: the volume is started and its brick process serves it
# (after glusterd restarts, a volume can say Started with its brick down).
brick_online() {
	timeout 20 "${cli[@]}" volume status "$volume" detail 2>/dev/null | grep -Eq '^Online +: +Y'
}

# mounted_clients prints the mount points of this volume's FUSE clients.
mounted_clients() {
	awk -v src="localhost:/$volume" '$1 == src && $3 == "fuse.glusterfs" { print $2 }' /proc/mounts
}

start() {
	[ "$(id -u)" = 0 ] || die "needs root (glusterd, mount)"
	command -v glusterd >/dev/null && command -v mount.glusterfs >/dev/null ||
		die "GlusterFS is not installed: apt-get install -y glusterfs-server glusterfs-client"

	# The brick is named by this machine's hostname, which glusterd must find
	# on one of its own interfaces (it refuses localhost for a brick).
	local host
	host=$(hostname)
	if ! getent hosts "$host" >/dev/null; then
		say "$host does not resolve: adding it to /etc/hosts as 127.0.1.1"
		printf '127.0.1.1\t%s\n' "$host" >>/etc/hosts
	fi

	local t
	if ! glusterd_answers; then
		t=$(now)
		mkdir -p "$state" /var/log/glusterfs
		/usr/sbin/glusterd -p "$pidfile" --log-file="$log" # daemonizes once it listens
		for _ in $(seq 100); do glusterd_answers && break; sleep 0.1; done
		glusterd_answers || die "glusterd did not answer within 10 s; see $log"
		took "glusterd start" "$t"
	fi

	if ! volume_exists; then
		t=$(now)
		# A brick directory left by a deleted volume keeps its volume-id
		# attribute, and glusterd refuses it: start from an empty one.
		rm -rf -- "$brick"
		mkdir -p "$brick"
		"${cli[@]}" volume create "$volume" "$host:$brick" force >/dev/null
		took "volume create" "$t"
	fi
	if ! brick_online; then
		t=$(now)
		"${cli[@]}" volume start "$volume" force >/dev/null
		took "volume start" "$t"
	fi

	t=$(now)
	status || die "the volume $volume does not answer a mount; see /var/log/glusterfs/"
	took "mount check" "$t"
	say "volume $volume started: mount -t glusterfs localhost:/$volume DIR"
}

# status mounts the volume once, writes, reads back and unmounts.
status() {
	local mnt ok=1
	mnt=$(mktemp -d /tmp/jobstore-gluster-check.XXXXXX)
	if mount -t glusterfs -o log-level=ERROR,log-file=/var/log/glusterfs/jobstore-kit-clients.log "localhost:/$volume" "$mnt" 2>/dev/null; then
		echo ok >"$mnt/.jobstore-kit-check" && [ "$(cat "$mnt/.jobstore-kit-check")" = ok ] && ok=0
		rm -f "$mnt/.jobstore-kit-check"
		umount "$mnt" || umount -l "$mnt"
	fi
	rmdir "$mnt"
	return $ok
}

stop() {
	[ "$(id -u)" = 0 ] || die "needs root"
	local mnt
	for mnt in $(mounted_clients); do
		# A bindfs stacked on a client (glusterfs-nolocks) holds it busy.
		awk -v under="$mnt/" '$3 == "fuse" && index($1, under) == 1 { print $2 }' /proc/mounts |
			while read -r over; do umount "$over" || umount -l "$over"; done
		umount "$mnt" || umount -l "$mnt"
	done
	if glusterd_answers; then
		if volume_exists; then
			"${cli[@]}" volume stop "$volume" force >/dev/null 2>&1 || true
			"${cli[@]}" volume delete "$volume" >/dev/null
		fi
	fi
	if [ -f "$pidfile" ]; then
		local pid
		pid=$(cat "$pidfile")
		# Only the glusterd this script started, by its pid.
		if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = glusterd ]; then
			kill "$pid"
			for _ in $(seq 50); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
		fi
		rm -f "$pidfile"
	fi
	rm -rf -- "$brick"
	say "stopped"
}

case "${1:-}" in
start) start ;;
status) status ;;
stop) stop ;;
*) die "usage: $0 start|status|stop" ;;
esac
