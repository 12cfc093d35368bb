# k8s_node.sh — what the Kubernetes benchmarks (k8s-plugin.sh, k8s-hooks.sh) start as a node:
# convgpud on an emulated 8GiB GPU (context charge 2 MiB), the kubelet stand-in and
# convgpu-device-plugin (skipped, exit 77, where they are not built), with the daemon's runtime
# directory and containerd's state on tmpfs as /run is on a node. Sourced with SRC and
# CONVGPU_BUILD_DIR set; it brings in the tests' helpers (tests/containers/lib.sh) and the
# private containerd (tests/k8s/containerd_lib.sh). Everything stops and is removed at exit.
. "$SRC/tests/containers/lib.sh"
. "$SRC/tests/k8s/containerd_lib.sh"
BB=$BUILD/bench
[ -x "$BB/bench_ab" ] || { echo "$(basename "$0"): missing $BB/bench_ab (build first)"; exit 1; }
STANDIN=$BUILD/bin/kubelet-standin
PLUGIN=$BUILD/bin/convgpu-device-plugin

k8s_bench_node() { # k8s_bench_node TAG: sets RUNDIR, CTD_STATE, DP; the memory units are listed
    local p
    for p in "$STANDIN" "$PLUGIN"; do # built only where Debian's grpc++ is installed
        [ -x "$p" ] || skip "$p was not built (it needs libgrpc++-dev, protobuf-compiler-grpc, libprotobuf-dev)"
    done
    if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
        RUNDIR=$(mktemp -d "/dev/shm/convgpu-bench-$1.XXXXXX")
        at_exit "rm -rf '$RUNDIR'"
        # containerd's state (the bundles: config.json, which the shim rewrites) too, as a
        # node's /run/containerd is.
        CTD_STATE=$(mktemp -d "/dev/shm/convgpu-bench-$1-ctd.XXXXXX")
        at_exit "rm -rf '$CTD_STATE'"
    fi
    export CONVGPU_EMU_CONTEXT=2MiB
    start_daemon --emulate 8GiB --log-level info
    DP=$TMP/device-plugins
    mkdir -p "$DP" "$TMP/kubelet"
    "$STANDIN" serve --dir "$DP" --state "$TMP/kubelet" >"$TMP/standin.log" 2>&1 &
    STANDIN_PID=$!
    at_exit 'kill -TERM $STANDIN_PID; wait $STANDIN_PID'
    wait_for "the stand-in serves" "$WAIT_S" test -e "$TMP/kubelet/ready"
    "$PLUGIN" --plugin-dir "$DP" --runtime-dir "$RUNDIR" >"$TMP/plugin.log" 2>&1 &
    PLUGIN_PID=$!
    at_exit 'kill -TERM $PLUGIN_PID; wait $PLUGIN_PID'
    wait_for "memory units listed" "$WAIT_S" test -s "$TMP/kubelet/convgpu.io_gpu-memory.list"
}
