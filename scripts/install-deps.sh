#!/bin/sh
# install-deps.sh — installs the Debian 12 packages convgpu builds and tests with.
# Runs apt-get as root (directly or via sudo); otherwise prints exactly what to install.
set -eu

PACKAGES="build-essential cmake pkg-config clang libclang-rt-14-dev \
libmicrohttpd-dev libjansson-dev libsqlite3-dev libhttp-parser-dev curl procps python3 \
docker.io runc podman"
# make deb and the package tests (docs/PACKAGING.md): Debian's packaging tools and a fresh root.
PACKAGES="$PACKAGES debhelper lintian debootstrap"
# The Slurm integration (src/integrations/slurm, tests/slurm): spank.h and real daemons.
SLURM_PACKAGES="slurmctld slurmd slurm-client munge libslurm-dev"
PACKAGES="$PACKAGES $SLURM_PACKAGES"
# The Kubernetes annotation publisher (`convgpu k8s publish`, src/integrations/k8s/publish):
# libcurl PATCHes the Node through the API server; openssl makes tests/k8s's TLS certificate.
K8S_PUBLISH_PACKAGES="libcurl4-openssl-dev openssl"
PACKAGES="$PACKAGES $K8S_PUBLISH_PACKAGES"
# The Kubernetes manifests' test (tests/k8s/test_manifests.py) parses packaging/k8s/*.yaml.
K8S_MANIFEST_PACKAGES="python3-yaml"
PACKAGES="$PACKAGES $K8S_MANIFEST_PACKAGES"
# The kubelet device plugin (grpc++, protobuf) and its containerd test (containerd, ctr, runc).
K8S_PLUGIN_PACKAGES="libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler containerd runc"
PACKAGES="$PACKAGES $K8S_PLUGIN_PACKAGES"

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "install-deps: missing packages:$missing"
if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
else
    echo "install-deps: not root and no password-less sudo; please run:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
