# lib.sh — helpers for the container tests: a private convgpud on the emulated GPU in a temporary
# runtime directory, a tiny root filesystem made from host binaries (convgpu-sample and a shell,
# with the libraries ldd names), a private Docker engine (start_dockerd), and cleanup that stops
# only what the test started (by pid or by its private runc root), unmounts anything left under
# the temporary directory and removes it. Also sourced by bench/docker-create.sh.
# Tests wait for conditions, never for durations: a workload a check looks at holds its state
# until the test releases it (convgpu-sample --hold-until /gate/release.NAME on a bind mount of
# $GATE, or --hold until the container is killed), and every deadline is generous (WAIT_S): it
# only bounds a hang. Docker on a loaded 2-core machine takes seconds per container.
set -eu

BUILD=${CONVGPU_BUILD_DIR:?CONVGPU_BUILD_DIR must point at the build tree}
TMP=$(mktemp -d /tmp/convgpu-ct.XXXXXX)
RUNDIR=$TMP/run
SHIM=$BUILD/bin/convgpu-runtime
SAMPLE=$BUILD/bin/convgpu-sample
DAEMON_PID=
DAEMON_LOG=$TMP/daemon.log
FAILS=0
PASSES=0
CLEANUPS=()
WAIT_S=120 # the deadline of a wait that should end soon: only bounds a hang
GATE=$TMP/gate # bind-mounted read-only at /gate into containers that hold until released
mkdir -p "$GATE"

at_exit() { CLEANUPS+=("$*"); } # at_exit COMMAND... : run at exit, last registered first

cleanup() {
    local rc=$?
    set +e
    for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do eval "${CLEANUPS[$i]}" >/dev/null 2>&1; done
    if [ -n "$DAEMON_PID" ]; then kill -TERM "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null; fi
    pkill -KILL -f "^convgpu-test-idle $TMP infinity\$"
    # Mounts a failed container may have left (deepest first).
    awk -v t="$TMP" 'index($2, t) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do
        umount -l "$m"; done
    if [ "$FAILS" -ne 0 ] || [ -n "${KEEP_TMP:-}" ]; then
        echo "--- daemon log ---"; tail -n 40 "$DAEMON_LOG" 2>/dev/null
        echo "--- runtime log ---"; tail -n 40 "$RUNDIR/oci/runtime.log" 2>/dev/null
    fi
    [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; PASSES=$((PASSES + 1)); }
check() { # check DESCRIPTION COMMAND...
    local what=$1; shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}
skip() { echo "SKIP: $*"; exit 77; }

finish() { # a test that ran no check proves nothing: it fails
    echo "$PASSES passed, $FAILS failed"
    [ "$PASSES" -gt 0 ] || echo "FAIL: no check ran"
    [ "$FAILS" -eq 0 ] && [ "$PASSES" -gt 0 ]
}

cg() { "$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" "$@"; }
api() { # api METHOD PATH -> prints the HTTP status
    curl -s -o "$TMP/api.out" -w '%{http_code}' --unix-socket "$RUNDIR/control.sock" -X "$1" \
        "http://convgpu$2" || true
}
json_get() { # json_get FIELD < JSON
    python3 -c 'import json,sys; v=json.load(sys.stdin).get(sys.argv[1]); print("" if v is None else v)' "$1"
}
container_field() { cg inspect "$1" 2>/dev/null | json_get "$2"; }
registered_count() { cg ps --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }

# A process that lives until the test kills it (a fake init, a lock holder). Run it in the
# background: `idle_process & pid=$!`. Cleanup stops it too.
idle_process() { exec -a "convgpu-test-idle $TMP" sleep infinity; }

wait_for() { # wait_for DESCRIPTION SECONDS COMMAND... (SECONDS bounds a hang)
    local what=$1 secs=$2; shift 2
    local deadline=$(($(date +%s%N) + secs * 1000000000))
    while ! "$@" >/dev/null 2>&1; do
        if [ "$(date +%s%N)" -gt "$deadline" ]; then echo "timed out after ${secs}s: $what"; return 1; fi
        sleep 0.05
    done
}

# wait_for runs its command on every poll, so give it a command, never "$(...)": bash expands
# that once, before the first poll, and the wait then tests a value frozen at the call.
# prints EXPECTED COMMAND... : COMMAND prints exactly EXPECTED (wait_for X 60 prints 0 count).
prints() { local want=$1; shift; [ "$("$@" 2>/dev/null)" = "$want" ]; }

start_daemon() { # start_daemon [convgpud args]; default: an emulated 5GiB GPU, 66MiB context
    mkdir -p "$RUNDIR"
    CONVGPU_EMU_CONTEXT=${CONVGPU_EMU_CONTEXT:-66MiB} "$BUILD/bin/convgpud" --runtime-dir "$RUNDIR" \
        --foreground --log-level debug ${*:---emulate 5GiB} >>"$DAEMON_LOG" 2>&1 &
    DAEMON_PID=$!
    # A daemon that never answers is a failure: counted, so that cleanup prints its log.
    wait_for "daemon answering on its control socket" "$WAIT_S" \
        curl -sf -o /dev/null --unix-socket "$RUNDIR/control.sock" http://convgpu/v1/version \
        || { fail "convgpud (pid $DAEMON_PID) did not answer on $RUNDIR/control.sock"; return 1; }
}

# Sanitizer settings a sanitized build needs inside containers too (the interposer is then
# instrumented and loaded into every process): as OCI env entries / docker -e arguments.
SAN_ENV=()
for v in ASAN_OPTIONS UBSAN_OPTIONS; do [ -z "${!v:-}" ] || SAN_ENV+=("$v=${!v}"); done
san_env_json() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "${SAN_ENV[@]}"; }

make_rootfs() { # make_rootfs DIR: host binaries and the libraries they (and ours) need
    local dir=$1 b f
    mkdir -p "$dir/tmp" "$dir/proc" "$dir/dev" "$dir/sys" "$dir/etc"
    for b in "$SAMPLE" /bin/sh /bin/cat /bin/sleep /bin/true /bin/ls /usr/bin/env \
        "$BUILD/lib/libconvgpu.so" "$BUILD/lib/emu/libcuda.so.1" ${ROOTFS_EXTRA:-}; do
        for f in "$b" $(ldd "$b" | grep -o '/[^ ]*'); do
            mkdir -p "$dir$(dirname "$f")"
            cp -L "$f" "$dir$f"
        done
    done
    mkdir -p "$dir/usr/local/bin"
    for b in "$SAMPLE" ${ROOTFS_EXTRA:-}; do cp "$b" "$dir/usr/local/bin/"; done
}

# ---- a private Docker engine -----------------------------------------------------------------
# docker_prereqs; start_daemon ...; start_dockerd; docker_images: dockerd with vfs storage, no
# iptables, no bridge, its own data root, exec root and socket under $DOCKER_DIR, a daemon.json
# written by `convgpu setup docker --config` (runtime "convgpu" -> the shim, this test's runtime
# dir); stopped (its containers removed first) at exit. Skips (77) with the reason where no
# engine can run. Never touches a system dockerd or /etc/docker.
DOCKER=
DOCKERD_PID=
DOCKER_DIR=$TMP/d
DOCKERD_ARGS=() # extra dockerd options
DOCKER_EXEC_ROOT= # dockerd's --exec-root (default $DOCKER_DIR/exec)

docker_prereqs() {
    command -v dockerd >/dev/null || skip "dockerd is not installed (apt-get install docker.io)"
    [ "$(id -u)" = 0 ] || skip "dockerd needs root"
    # The client that matches Debian's dockerd, when a newer one shadows it in PATH.
    DOCKER=$(command -v docker || true)
    [ -x /usr/bin/docker ] && DOCKER=/usr/bin/docker
    [ -n "$DOCKER" ] || skip "no docker client (apt-get install docker.io)"
    export CONVGPU_DOCKER=$DOCKER
}

stop_dockerd() {
    [ -n "$DOCKERD_PID" ] || return 0
    local ids
    ids=$("$DOCKER" ps -aq 2>/dev/null); [ -z "$ids" ] || "$DOCKER" rm -f $ids
    kill -TERM "$DOCKERD_PID"
    for _ in $(seq 100); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$DOCKERD_PID" 2>/dev/null
    wait "$DOCKERD_PID" 2>/dev/null
    DOCKERD_PID=
}

start_dockerd() { # after start_daemon
    [ -n "$DOCKER" ] || docker_prereqs
    mkdir -p "$DOCKER_DIR"
    export DOCKER_HOST=unix://$DOCKER_DIR/docker.sock
    cg setup docker --config "$DOCKER_DIR/daemon.json" >"$TMP/setup.out"
    at_exit stop_dockerd
    dockerd --config-file "$DOCKER_DIR/daemon.json" --storage-driver=vfs --iptables=false \
        --bridge=none --data-root "$DOCKER_DIR/data" --exec-root "${DOCKER_EXEC_ROOT:-$DOCKER_DIR/exec}" \
        --pidfile "$DOCKER_DIR/docker.pid" -H "unix://$DOCKER_DIR/docker.sock" \
        ${DOCKERD_ARGS[@]+"${DOCKERD_ARGS[@]}"} >"$DOCKER_DIR/dockerd.log" 2>&1 &
    DOCKERD_PID=$!
    if ! wait_for "dockerd answers" "$WAIT_S" "$DOCKER" info; then
        echo "--- dockerd log ---"; tail -n 30 "$DOCKER_DIR/dockerd.log"
        skip "dockerd did not start here (see its log above)"
    fi
}

docker_images() { # cg-sample:1 (make_rootfs) and cg-labeled:1 (the paper's label, 256MiB)
    make_rootfs "$TMP/img"
    tar -C "$TMP/img" -c . | "$DOCKER" import - cg-sample:1 >/dev/null
    tar -C "$TMP/img" -c . | "$DOCKER" import --change 'LABEL com.nvidia.memory.limit=256MiB' - \
        cg-labeled:1 >/dev/null
}

SAN_ARGS=()
for e in ${SAN_ENV[@]+"${SAN_ENV[@]}"}; do SAN_ARGS+=(-e "$e"); done
dr() { # convgpu docker run --network none [sanitizer env] ARGS...
    "$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" docker run --network none \
        ${SAN_ARGS[@]+"${SAN_ARGS[@]}"} "$@"
}
