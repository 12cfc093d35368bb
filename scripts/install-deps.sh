#!/bin/sh
# install-deps.sh — installs the Debian 12 packages convgpu needs, in two sets:
#   build  building everything `make` builds and running `make demo` (a compiler, CMake and
#          the libraries the daemon, CLI and integrations link). A person who wants to see
#          convgpu work gets this and nothing else: no container engines, no Slurm.
#   all    (the default) build plus the integration world `make check` tests against: Docker,
#          Podman, containerd, Slurm's daemons, the packaging tools, the fuzzers' clang, gRPC.
# Runs apt-get as root (directly or via sudo); otherwise prints exactly what to install.
# `install-deps.sh --list SET` prints a set's packages, one a line, and installs nothing
# (docs/TESTING.md measures each set with `apt-get --simulate` against it).
#
# Usage: scripts/install-deps.sh [build|all]      scripts/install-deps.sh --list build|all
set -eu

# Building and the demo. libcurl: the annotation publisher (src/integrations/k8s/publish)
# always builds; the Slurm plugin and the device plugin are built only where their headers are.
BUILD_PACKAGES="build-essential cmake pkg-config \
libmicrohttpd-dev libjansson-dev libsqlite3-dev libhttp-parser-dev libcurl4-openssl-dev procps"

# The integration world: what `make check`'s stages (test, asan, tsan, fuzz, package) use.
# The fuzz stage's compiler and libFuzzer; the tests' helpers.
WORLD_PACKAGES="clang libclang-rt-14-dev curl python3"
# The container tests (tests/containers): real engines.
WORLD_PACKAGES="$WORLD_PACKAGES docker.io runc podman"
# make deb and the package tests (docs/PACKAGING.md): Debian's packaging tools and a fresh root.
WORLD_PACKAGES="$WORLD_PACKAGES debhelper lintian debootstrap"
# The Slurm integration (src/integrations/slurm, tests/slurm): spank.h and real daemons.
WORLD_PACKAGES="$WORLD_PACKAGES slurmctld slurmd slurm-client munge libslurm-dev"
# openssl makes tests/k8s's TLS certificate; the manifests' test parses packaging/k8s/*.yaml.
WORLD_PACKAGES="$WORLD_PACKAGES openssl python3-yaml"
# The kubelet device plugin (grpc++, protobuf) and its containerd test (containerd, ctr, runc).
WORLD_PACKAGES="$WORLD_PACKAGES libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev \
protobuf-compiler containerd"

packages_of() {
    case "$1" in
    build) echo "$BUILD_PACKAGES" ;;
    all) echo "$BUILD_PACKAGES $WORLD_PACKAGES" ;;
    *) echo "install-deps: unknown set '$1' (build or all)" >&2; exit 2 ;;
    esac
}

if [ "${1:-}" = "--list" ]; then
    [ "$#" -eq 2 ] || { echo "usage: $0 --list build|all" >&2; exit 2; }
    for p in $(packages_of "$2"); do echo "$p"; done
    exit 0
fi
[ "$#" -le 1 ] || { echo "usage: $0 [build|all]" >&2; exit 2; }
SET=${1:-all}
PACKAGES=$(packages_of "$SET")

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "install-deps ($SET): missing packages:$missing"
if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
else
    echo "install-deps: not root and no password-less sudo; please run:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
