#!/bin/sh
# debian-root.sh — makes sure a clean Debian 12 (bookworm) minbase root exists at CACHE, with
# apt's lists at most a day old, for the package test and the node image to start from. Made
# once with debootstrap (a few minutes), under a lock so that two callers do not both make it;
# callers never write it (they mount an overlay on it).
#
# Usage: packaging/debian-root.sh CACHE [MIRROR]      (root; MIRROR default deb.debian.org)
set -eu
[ "$#" -ge 1 ] || { echo "usage: $0 CACHE [MIRROR]" >&2; exit 2; }
CACHE=$1
MIRROR=${2:-http://deb.debian.org/debian}
DIR=$(dirname "$CACHE")
mkdir -p "$DIR"
exec 9>"$CACHE.lock"
flock 9
if [ ! -x "$CACHE/usr/bin/apt-get" ]; then
    echo "debian-root: making the Debian 12 root (once) in $CACHE"
    rm -rf "$CACHE.tmp"
    if ! debootstrap --variant=minbase bookworm "$CACHE.tmp" "$MIRROR" >"$CACHE.debootstrap.log" 2>&1; then
        tail -n 20 "$CACHE.debootstrap.log" >&2
        echo "debian-root: debootstrap failed" >&2
        exit 1
    fi
    mv "$CACHE.tmp" "$CACHE"
fi
# An old list names versions the mirror no longer has: refresh it once a day.
if [ -z "$(find "$CACHE/var/lib/apt/lists" -maxdepth 1 -name '*_Packages' -mtime -1 2>/dev/null)" ]; then
    cp /etc/resolv.conf "$CACHE/etc/resolv.conf"
    if ! chroot "$CACHE" apt-get update -q >"$CACHE.apt-update.log" 2>&1; then
        tail -n 20 "$CACHE.apt-update.log" >&2
        echo "debian-root: apt-get update in $CACHE failed" >&2
        exit 1
    fi
fi
