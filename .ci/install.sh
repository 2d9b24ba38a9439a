#!/usr/bin/env bash
# Installs what CI uses beyond Go, gcc, git and python3. Idempotent: a package
# or tool already present is not fetched again.
set -euo pipefail

need=()
command -v strace >/dev/null || need+=(strace)
command -v fusermount3 >/dev/null || need+=(fuse3)
command -v bindfs >/dev/null || need+=(bindfs) # the two-host kit: two mounts of one directory
# The two-host kit on a real distributed filesystem (.ci/gluster.sh starts it).
command -v glusterd >/dev/null || need+=(glusterfs-server)
command -v mount.glusterfs >/dev/null || need+=(glusterfs-client)
command -v wine >/dev/null || need+=(wine wine64)
command -v x86_64-w64-mingw32-gcc >/dev/null || need+=(gcc-mingw-w64-x86-64-win32)
python3 -c 'import jsonschema' 2>/dev/null || need+=(python3-jsonschema)
# The README's pip route (cmd/jobstore/readme_python_test.go): a venv with pip.
python3 -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
# jobstore serve's browser tests (cmd/jobstore/internal/serve/serve_browser_linux_test.go) drive it headless.
command -v chromium >/dev/null || need+=(chromium)
if ((${#need[@]})); then
	echo "apt-get install ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

gobin="$(go env GOPATH)/bin"
# Pinned tool versions (both work with the go 1.25 line of go.mod and Go 1.26).
[ -x "$gobin/staticcheck" ] && "$gobin/staticcheck" -version | grep -q '0.8.2' ||
	GOFLAGS= go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
