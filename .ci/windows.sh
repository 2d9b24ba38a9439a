#!/usr/bin/env bash
# Run the root package's and the internal packages' tests as Windows binaries
# under Wine.
#
# Wine is a smoke test of the Windows write path (MoveFileEx, sharing
# violations, read-only job.json), not proof of NTFS behaviour.
#
# Needs root for apt-get when Wine or mingw is missing; idempotent. Each run
# uses a fresh, temporary WINEPREFIX and removes it afterwards. Exits with
# go test's status. Called by .ci/run as: bash .ci/windows.sh
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

echo "== Windows under Wine: toolchain"
pkgs=(wine wine64 gcc-mingw-w64-x86-64-win32)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "installing: ${missing[*]}"
	apt_install() { DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"; }
	apt_install || { apt-get update && apt_install; } # update the lists only when they are stale
fi
wine --version 2>/dev/null # (its stderr only nags about wine32)

work=$(mktemp -d "${TMPDIR:-/tmp}/jobstore-wine.XXXXXX")
export WINEPREFIX="$work/prefix"
export WINEDEBUG=-all
export WINEDLLOVERRIDES="mscoree,mshtml=" # no Mono/Gecko install prompts during wineboot
unset DISPLAY                            # no windows, no X needed
cleanup() {
	wineserver -k 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM # so that the EXIT trap runs

echo "== Windows under Wine: stand-in bcryptprimitives.dll (Wine 8 lacks ProcessPrng, which Go's runtime needs)"
x86_64-w64-mingw32-gcc -O2 -Wall -shared -o "$work/bcryptprimitives.dll" \
	.ci/wine/bcryptprimitives.c .ci/wine/bcryptprimitives.def -ladvapi32

# Wine's set-up steps get a bounded wait: a wineboot or wineserver that hangs
# (a prefix left locked by a killed run) fails here, naming the step, instead
# of holding CI until its own timeout.
wine_setup_timeout=300
bounded() {
	timeout "$wine_setup_timeout" "$@" || {
		rc=$?
		if [ "$rc" -eq 124 ]; then
			echo "Wine: '$*' did not return within ${wine_setup_timeout}s" >&2
		else
			echo "Wine: '$*' failed (exit $rc)" >&2
		fi
		return "$rc"
	}
}

# A new prefix's wineboot now and then fails at once on this machine, and
# succeeds when run again on a new prefix: it is made once more before the
# step fails, with wineboot's own output shown.
fresh_prefix() {
	bounded wineboot --init >"$work/wineboot.log" 2>&1 && bounded wineserver -w
}
echo "== Windows under Wine: fresh prefix"
if ! fresh_prefix; then
	tail -n 20 "$work/wineboot.log" >&2
	echo "Wine: making the prefix once more" >&2
	wineserver -k >/dev/null 2>&1 || true
	rm -rf "$WINEPREFIX"
	fresh_prefix || { tail -n 20 "$work/wineboot.log" >&2; exit 1; }
fi
cp "$work/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/"
# Start Wine's system processes (services.exe, winedevice.exe, ...) now, with
# stdio on /dev/null, and keep them alive with a persistent wineserver. Started
# by the test binary instead, they would inherit go test's output pipe and
# outlive it, and go test would fail with "Test I/O incomplete" after 1 min.
bounded wineserver -p </dev/null >/dev/null 2>&1
bounded wine cmd /c exit </dev/null >/dev/null 2>&1

# internal/strace and internal/crashmodel model Linux strace logs (Unix paths,
# Linux syscalls): there is no Windows code in them to run.
pkgs=(. $(GOOS=windows go list ./internal/... | grep -v -e /internal/strace -e /internal/crashmodel))
# One test binary at a time (-p 1): the root package's tests start many child
# processes. Even so, Wine now and then fails to give one of them a thread or
# a process ("runtime: failed to create new OS thread", errno 8, which is
# ERROR_NOT_ENOUGH_MEMORY; "fork/exec ...: Internal error"), or a child
# starts without its system DLLs ("Failed to load ws2_32.dll: DLL
# initialization failed"), on a machine with memory to spare. When one of
# those messages is in the output, the root package's
# tests that failed run once more, by name, and that run decides; any other
# failure fails at once.
echo "== Windows under Wine: GOOS=windows go test -p 1 -exec wine -count=1 ${pkgs[*]}"
log="$work/test.log"
rc=0
GOOS=windows GOARCH=amd64 go test -p 1 -exec wine -count=1 "${pkgs[@]}" 2>&1 | tee "$log" || rc=$?
# Wine 8 on a loaded machine has also once answered a directory rename
# with ERROR_INVALID_HANDLE (Submit's rename into place; 8 of 8 runs of
# the test alone passed): such a failure is run once more too.
if [ "$rc" -ne 0 ] && grep -qE 'failed to create new OS thread|fork/exec .*: Internal error|Failed to load [A-Za-z0-9_]+\.dll: DLL initialization failed|: Invalid handle\.' "$log"; then
	failed=$(grep -oE '^--- FAIL: [A-Za-z0-9_]+' "$log" | awk '{print $3}' | sort -u | paste -sd'|' || true)
	others=$(grep -E '^(FAIL|ok)\s' "$log" | grep -v -E '^FAIL\s+github.com/axqua/jobstore\s' | grep -c '^FAIL' || true)
	if [ -n "$failed" ] && [ "$others" -eq 0 ]; then
		echo "== Windows under Wine: Wine could not create a thread or start a process; running again: $failed"
		rc=0
		GOOS=windows GOARCH=amd64 go test -exec wine -count=1 -run "^($failed)\$" . || rc=$?
	fi
fi
echo "== Windows under Wine: go test exit $rc, $((SECONDS - start)) s in all"
exit "$rc"
