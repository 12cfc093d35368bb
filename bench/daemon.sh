# daemon.sh — sourced by the benchmark scripts: a private convgpud for one benchmark run, on the
# real GPU (REAL=1) or on a 16 GiB emulated one, in $TMP/run; the caller's EXIT trap stops $DPID.
#   start_bench_daemon [convgpud options...]   sets RUN and DPID, defines cg (the CLI on it)
start_bench_daemon() {
    RUN=$TMP/run
    mkdir -p "$RUN"
    if [ "$REAL" = 1 ]; then
        "$BUILD/bin/convgpud" --runtime-dir "$RUN" "$@" --foreground >"$TMP/daemon.log" 2>&1 &
    else
        CONVGPU_EMU_STATE=$RUN/emu/state "$BUILD/bin/convgpud" --runtime-dir "$RUN" \
            --emulate 16GiB "$@" --foreground >"$TMP/daemon.log" 2>&1 &
    fi
    DPID=$!
    local _
    for _ in $(seq 3000); do # 60 s: bounds a hang only
        [ -S "$RUN/control.sock" ] && break
        kill -0 "$DPID" 2>/dev/null || { cat "$TMP/daemon.log" >&2; exit 1; }
        sleep 0.02
    done
}
cg() { "$BUILD/bin/convgpu" --runtime-dir "$RUN" "$@"; }
