#!/usr/bin/env bash
# test_upgrade.sh — an upgrade and a downgrade of convgpud while containers run. NEXT is this
# tree built once more as the next version (CONVGPU_VERSION_BUMP: protocol 2, ledger 4, record
# 2, layouts unchanged; kept in BUILD/next between runs). The daemons are swapped as a package
# upgrade does (systemctl restart: SIGTERM, then the new binary on the same runtime directory).
#   upgrade:   every container and account survives; a process of the old interposer is
#              answered in its own protocol (its next allocation is granted); a process of the
#              new interposer runs in a container whose ledger the old daemon made.
#   downgrade: the old daemon refuses to start while a record of the new one exists, and says
#              why; with none, it starts, keeps the accounts of processes of the new interposer
#              it cannot speak to, and shows them fenced per container; a new process of the new
#              interposer is disconnected with the reason.
source "$(dirname "$0")/lib.sh"
SRC=${CONVGPU_SOURCE_DIR:?}
NEXT=$BUILD/next
PROBE=$BUILD/bin/ip_probe
export CONVGPU_EMU_CONTEXT=2MiB

if ! { cmake -S "$SRC" -B "$NEXT" -G "Unix Makefiles" -DCONVGPU_VERSION_BUMP=ON \
        -DCONVGPU_SANITIZE= -DCONVGPU_FUZZ=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        >"$TMP/next.log" 2>&1 &&
       cmake --build "$NEXT" -j 2 --target convgpud convgpu convgpu_cli convgpu_emu_cuda \
        convgpu_emu_nvml >>"$TMP/next.log" 2>&1; }; then
    tail -n 30 "$TMP/next.log"
    fail "cannot build the next version in $NEXT"
    finish
fi
OLD_V=$("$BUILD/bin/convgpu" --version | sed -n 's/^convgpu //p')
NEW_V=$("$NEXT/bin/convgpu" --version | sed -n 's/^convgpu //p')
check "the next build is another version ($OLD_V -> $NEW_V)" test "$OLD_V" != "$NEW_V"

daemon_of() { # daemon_of BUILD_DIR: starts that build's convgpud on RUNDIR
    "$1/bin/convgpud" --runtime-dir "$RUNDIR" --foreground --log-level debug --emulate 2GiB \
        >>"$DAEMON_LOG" 2>&1 &
    DAEMON_PID=$!
    wait_for "daemon answering" "$WAIT_S" curl -sf -o /dev/null --unix-socket \
        "$RUNDIR/control.sock" http://convgpu/v1/version
}
stop_daemon() { kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true; DAEMON_PID=; }
version_is() { [ "$(curl -sf --unix-socket "$RUNDIR/control.sock" http://convgpu/v1/version | json_get version)" = "$1" ]; }
account() { # account ID: "limit used processes fenced" as the daemon has it
    curl -sf --unix-socket "$RUNDIR/control.sock" "http://convgpu/v1/containers/$1" |
        python3 -c 'import json,sys; c=json.load(sys.stdin); print(c["limit"], c["used"], c["processes"], c.get("fenced"))'
}
env_of() { tail -n +2 "$TMP/$1.create"; } # the K=V lines `convgpu create` printed

# --- before: the old daemon, two containers with processes holding memory
daemon_of "$BUILD"
cg create --gpu-memory 512MiB --name upa >"$TMP/a.create"
A=$(head -n 1 "$TMP/a.create")
( set -a; eval "$(env_of a)"; exec "$PROBE" steps 100MiB "$TMP/a.step" ) >"$TMP/a.out" 2>&1 &
A_PID=$!
wait_for "A's process holds its first 100MiB" "$WAIT_S" test -e "$TMP/a.step"
cg run --quiet --gpu-memory 256MiB -- "$BUILD/bin/convgpu-sample" --size 64MiB --quiet \
    --hold-until "$TMP/b.release" >"$TMP/b.out" 2>&1 &
B_RUN=$!
b_holds() { B=$(cg ps --json | python3 -c 'import json,sys; print(next((c["id"] for c in json.load(sys.stdin) if c["id"] != sys.argv[1] and c["used"] > 0), ""))' "$A"); [ -n "$B" ]; }
wait_for "B's process holds its 64MiB" "$WAIT_S" b_holds
b_holds
a_before=$(account "$A") b_before=$(account "$B")

# --- the upgrade
stop_daemon
daemon_of "$NEXT"
check "the new daemon runs ($NEW_V)" version_is "$NEW_V"
check "A's account survives the upgrade ($a_before)" test "$(account "$A")" = "$a_before"
check "B's account survives the upgrade ($b_before)" test "$(account "$B")" = "$b_before"
rm -f "$TMP/a.step" # A's old interposer asks the new daemon for its second 100MiB
rc=0; wait "$A_PID" || rc=$?
check "A's process (old interposer, protocol 1) is granted by the new daemon (exit $rc)" \
    bash -c "[ $rc = 0 ] && grep -q 'step2 rc=0' '$TMP/a.out'"
check "the new daemon answered it in protocol 1: no version complaint" \
    bash -c "! grep -q 'speaks protocol' '$DAEMON_LOG'"
# A process of the new interposer in A, whose ledger (version 3) the old daemon made.
# Its second step (300MiB more, past A's 512MiB limit) must ask the daemon, whichever it is.
( set -a; eval "$(env_of a)"; LD_PRELOAD=$NEXT/lib/libconvgpu.so
  LD_LIBRARY_PATH=$NEXT/lib/emu; CONVGPU_DAEMON_TIMEOUT=5
  exec "$PROBE" steps 300MiB "$TMP/p2.step" ) >"$TMP/p2.out" 2>&1 &
P2=$!
wait_for "a new-interposer process runs in A (the old ledger adopted)" "$WAIT_S" test -e "$TMP/p2.step"
touch "$TMP/b.release"
rc=0; wait "$B_RUN" || rc=$?
check "B's process finished under the new daemon (exit $rc)" test "$rc" = 0

# --- a downgrade while the new daemon's records exist: refused, with the reason
cg create --gpu-memory 64MiB --name upc >"$TMP/c.create"
C=$(head -n 1 "$TMP/c.create")
stop_daemon
rc=0; timeout 120 "$BUILD/bin/convgpud" --runtime-dir "$RUNDIR" --foreground --emulate 2GiB \
    >"$TMP/down.log" 2>&1 || rc=$?
check "the old daemon refuses to start over the new one's records (exit $rc)" test "$rc" != 0
check "... and says why and what to do" grep -q "written by a newer convgpud (record version 2; this one reads 1 to 1).*Reinstall the newer convgpu" "$TMP/down.log"
daemon_of "$NEXT"
check "the new daemon, started again, still has A and C" bash -c "cg() { '$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' \"\$@\"; }; cg inspect '$A' >/dev/null && cg inspect '$C' >/dev/null"

# --- a downgrade with no new record left: the old daemon starts and fences what it cannot speak to
cg rm "$C" >/dev/null
a_before=$(account "$A")
stop_daemon
daemon_of "$BUILD"
check "the old daemon runs again ($OLD_V)" version_is "$OLD_V"
rm -f "$TMP/p2.step" # P2 (protocol 2) reconnects to ask for its second 300MiB
fenced() { account "$A" | grep -q "speaks protocol 2, this convgpud 1 to 1 (a newer interposer: a downgrade)"; }
wait_for "A is shown fenced" "$WAIT_S" fenced || true
check "A is fenced, saying which process and why" fenced
used_now=$(account "$A" | cut -d' ' -f2)
check "A keeps P2's account while it is fenced ($used_now, before $a_before)" \
    test "$used_now" = "$(cut -d' ' -f2 <<<"$a_before")"
kill -TERM "$P2" 2>/dev/null; wait "$P2" 2>/dev/null || true

# A new process of the new interposer on the old daemon is refused by name.
( set -a; eval "$(env_of a)"; LD_PRELOAD=$NEXT/lib/libconvgpu.so LD_LIBRARY_PATH=$NEXT/lib/emu
  CONVGPU_DAEMON_TIMEOUT=1; exec "$PROBE" alloc 16MiB ) >"$TMP/p3.out" 2>&1 || true
check "a new process of the newer interposer is disconnected by the old daemon, by name" \
    grep -q "speaks protocol 2, this convgpud 1 to 1 (a newer interposer: a downgrade); disconnecting" "$DAEMON_LOG"
finish
