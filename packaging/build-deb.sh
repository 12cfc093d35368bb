#!/bin/sh
# build-deb.sh — `make deb`: builds the Debian 12 packages (debian/) with dpkg-buildpackage and
# debhelper from a copy of the working tree, so that neither the tree (debian/tmp, obj-*) nor
# its parent directory (where dpkg-buildpackage writes its results) is touched; then runs
# lintian on the result. The .debs, .changes and .buildinfo end up in OUT.
#
# Usage: packaging/build-deb.sh OUT [JOBS]     (the Makefile passes build-deb and $(JOBS))
# The copy includes uncommitted changes: it is the tree as it is, minus build outputs and .git.
# CONVGPU_DEB_NEXT=1 (`make deb-next`): the packages of the next version instead, for the
# upgrade test (tests/package/test_upgrade_deb.sh): the copy gets a changelog entry one patch
# version up and is built with CONVGPU_VERSION_BUMP (higher protocol, ledger and record
# versions; CMakeLists.txt), without the unit tests (the plain build ran them).
set -eu
[ "$#" -ge 1 ] || { echo "usage: $0 OUT [JOBS]" >&2; exit 2; }
OUT=$1
JOBS=${2:-2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
for tool in dpkg-buildpackage dh lintian; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "build-deb: $tool is missing (make deps installs debhelper and lintian)" >&2; exit 1; }
done
VERSION=$(dpkg-parsechangelog -S Version)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$OUT/src
SRC=$WORK/convgpu-$VERSION
rm -rf "$WORK"
mkdir -p "$SRC"
# Build outputs and the cache of the package test (build-deb/cache) are not source.
tar -C "$ROOT" --exclude=./.git --exclude=./build --exclude='./build-*' --exclude='./obj-*' \
    --exclude=./debian/tmp --exclude=./debian/.debhelper -cf - . | tar -C "$SRC" -xf -
if [ -n "${CONVGPU_DEB_NEXT:-}" ]; then
    NEXT=$(echo "$VERSION" | awk -F. '{ printf "%s.%s.%d", $1, $2, $3 + 1 }')
    { printf 'convgpu (%s) bookworm; urgency=medium\n\n  * The next version, for the upgrade test only.\n\n' "$NEXT"
      printf ' -- convgpu tests <tests@convgpu.invalid>  %s\n\n' "$(date -R)"
      cat "$SRC/debian/changelog"; } >"$SRC/debian/changelog.next"
    mv "$SRC/debian/changelog.next" "$SRC/debian/changelog"
    VERSION=$NEXT
    export CONVGPU_CMAKE_EXTRA=-DCONVGPU_VERSION_BUMP=ON DEB_BUILD_OPTIONS=nocheck
fi
(cd "$SRC" && dpkg-buildpackage -us -uc -b "-j$JOBS")
rm -f "$OUT"/*.deb "$OUT"/*.changes "$OUT"/*.buildinfo
mv "$WORK"/*.deb "$WORK"/*.changes "$WORK"/*.buildinfo "$OUT"/
rm -rf "$WORK"
echo "build-deb: packages in $OUT:"
ls -1 "$OUT"/*.deb
# Lintian: errors fail the build; the warnings kept are explained in debian/README.source.
CHANGES=$(ls "$OUT"/convgpu_"$VERSION"_*.changes)
lintian --fail-on error --info "$CHANGES"
