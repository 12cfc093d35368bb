#!/usr/bin/env bash
# test_upgrade_deb.sh — package.upgrade: an `apt install` of the next version's packages while
# containers run, in a fresh Debian 12 root. The first version's .debs (`make deb`) are
# installed, their daemon started as the unit starts it, and two containers made with processes
# holding memory; then the next version's
# .debs (`make deb-next`: this tree with its protocol, ledger and record versions bumped) are
# installed over them and the daemon restarted as systemd would (SIGTERM, then the new binary;
# there is no systemd in the root). Every container and account must be as before, the old
# processes must finish, and a new process of the new interposer must work in the old container
# (an old process's request answered in its own protocol is e2e.upgrade's). Then the old packages once more: the downgraded daemon refuses to start, saying
# why. Root, debootstrap's cached root (packaging/debian-root.sh) and Debian's mirror, as
# package.install.
set -eu
PKG_TEST=package.upgrade
. "$(dirname "$0")/root_lib.sh"
NEXT_DIR=${CONVGPU_DEB_NEXT_DIR:-$SRC/build-deb-next}
deb_list=$(debs_of "$DEB_DIR") || exit 1
mapfile -t OLD_DEBS <<<"$deb_list"
deb_list=$(debs_of "$NEXT_DIR") || exit 1
mapfile -t NEW_DEBS <<<"$deb_list"
root_up
install_set() { # install_set NAME DEB...: apt-get install of those .debs in the root
    local name=$1; shift
    mkdir -p "$ROOT/tmp/$name"
    cp "$@" "$ROOT/tmp/$name/"
    local in=() f
    for f in "$@"; do in+=("/tmp/$name/${f##*/}"); done
    in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --allow-downgrades \
        --no-install-recommends "${in[@]}" >"$WORK/apt-$name.log" 2>&1
}
start_daemon() { # as the unit starts it, on the emulated GPU
    chroot "$ROOT" env -i PATH=/usr/bin:/bin CONVGPU_EMU_CONTEXT=66MiB \
        /usr/bin/convgpud --foreground --emulate 5GiB >>"$ROOT/tmp/convgpud.log" 2>&1 &
    DAEMON_PID=$!
    wait_until "convgpud answering" in_root convgpu devices >/dev/null 2>&1
}
restart_daemon() { kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" || true; DAEMON_PID=; start_daemon; }
account() { # account ID: limit, use and processes as the daemon has them
    in_root convgpu inspect "$1" | python3 -c 'import json,sys; c=json.load(sys.stdin); print(c["limit"], c["used"], c["processes"], c.get("fenced"))'
}

install_set old "${OLD_DEBS[@]}" || { tail -n 30 "$WORK/apt-old.log"; die "apt-get install of the first version failed"; }
OLD_V=$(in_root dpkg-query -W -f='${Version}' convgpu)
pass "the first version installed ($OLD_V)"
in_root install -d -m 0755 /run/convgpu
start_daemon

# Container A (convgpu create): a process holding 100MiB until released.
in_root convgpu create --gpu-memory 512MiB --name upa >"$WORK/a.create"
A=$(head -n 1 "$WORK/a.create")
tail -n +2 "$WORK/a.create" | sed 's/^/export /' >"$ROOT/tmp/a.env"
# Container B: `convgpu run` of a sample holding 64MiB until released.
chroot "$ROOT" env -i PATH=/usr/bin:/bin convgpu run --quiet --gpu-memory 256MiB -- \
    convgpu-sample --size 64MiB --quiet --hold-until /tmp/b.release >"$WORK/b.out" 2>&1 &
B_RUN=$!
chroot "$ROOT" env -i PATH=/usr/bin:/bin sh -c '. /tmp/a.env
    exec convgpu-sample --size 100MiB --quiet --hold-until /tmp/a.release' >"$WORK/a.out" 2>&1 &
A_RUN=$!
holds() { [ "$(in_root convgpu ps --json | python3 -c 'import json,sys; print(sum(1 for c in json.load(sys.stdin) if c["used"] > 0))')" = 2 ]; }
wait_until "both containers' processes hold their memory" holds
B=$(in_root convgpu ps --json | python3 -c 'import json,sys; print(next(c["id"] for c in json.load(sys.stdin) if c["id"] != sys.argv[1]))' "$A")
a_before=$(account "$A") b_before=$(account "$B")

# --- the upgrade: the next version's packages over the running containers, then the restart
install_set new "${NEW_DEBS[@]}" || { tail -n 30 "$WORK/apt-new.log"; die "apt-get install of the next version failed"; }
NEW_V=$(in_root dpkg-query -W -f='${Version}' convgpu)
check "apt upgraded convgpu ($OLD_V -> $NEW_V)" test "$OLD_V" != "$NEW_V"
restart_daemon
daemon_v=$(curl -sf --unix-socket "$ROOT/run/convgpu/control.sock" http://convgpu/v1/version |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
check "the daemon now running is the next version ($daemon_v)" test "$daemon_v" = "$NEW_V"
check "A's account is as before the upgrade ($a_before)" test "$(account "$A")" = "$a_before"
check "B's account is as before the upgrade ($b_before)" test "$(account "$B")" = "$b_before"
# A new process of the new interposer in A, whose ledger the old daemon made.
check "a process of the new interposer runs in the old container A" \
    chroot "$ROOT" env -i PATH=/usr/bin:/bin sh -c '. /tmp/a.env
        export LD_PRELOAD=/usr/lib/convgpu/libconvgpu.so
        exec convgpu-sample --size 64MiB --quiet'
rc=0; chroot "$ROOT" env -i PATH=/usr/bin:/bin sh -c '. /tmp/a.env
    export LD_PRELOAD=/usr/lib/convgpu/libconvgpu.so
    exec convgpu-sample --size 600MiB --quiet' >/dev/null 2>&1 || rc=$?
check "... and A's old limit holds for it: 600MiB more refused (exit $rc)" test "$rc" = 2
touch "$ROOT/tmp/a.release" "$ROOT/tmp/b.release"
rc=0; wait "$A_RUN" || rc=$?
check "A's old-interposer process finished under the new daemon (exit $rc)" test "$rc" = 0
rc=0; wait "$B_RUN" || rc=$?
check "B's old-interposer process finished under the new daemon (exit $rc)" test "$rc" = 0
# Every byte the old processes held comes back: nothing lost or counted twice.
a_idle() { [ "$(account "$A")" = "536870912 0 0 None" ]; }
wait_until "A's use back to 0 once its processes exited" a_idle && pass "A: limit kept, use and processes 0"
gpu_used() { curl -sf --unix-socket "$ROOT/run/convgpu/control.sock" http://convgpu/v1/devices |
    python3 -c 'import json,sys; d=json.load(sys.stdin); d=d if isinstance(d,list) else d["devices"]; print(sum(x["used"] for x in d))'; }
check "the GPU's use is 0 at the end ($(gpu_used))" test "$(gpu_used)" = 0
check "nothing is fenced" bash -c "! grep -q 'fenced\|speaks protocol' '$ROOT/tmp/convgpud.log'"

# --- a downgrade while a container of the new daemon exists: refused, with the reason
in_root convgpu create --gpu-memory 64MiB --name upc >/dev/null
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" || true; DAEMON_PID=
install_set down "${OLD_DEBS[@]}" || { tail -n 30 "$WORK/apt-down.log"; die "apt-get install of the first version again failed"; }
rc=0; timeout "$WAIT_S" chroot "$ROOT" env -i PATH=/usr/bin:/bin CONVGPU_EMU_CONTEXT=66MiB \
    /usr/bin/convgpud --foreground --emulate 5GiB >"$WORK/down.log" 2>&1 || rc=$?
check "the downgraded daemon refuses to start (exit $rc)" test "$rc" != 0
check "... saying why and what to do" grep -q "written by a newer convgpud.*Reinstall the newer convgpu" "$WORK/down.log"
echo "$PASSES passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
