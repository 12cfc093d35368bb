# oversub_node.sh — one Kubernetes node for issue 37 item 5 (k8s.oversub, bench/k8s-oversub.sh):
# convgpud on one emulated 4 GiB GPU, the kubelet stand-in (real gRPC, tests/k8s/kubelet_standin.cc)
# and convgpu-device-plugin registered with it, and the pods' side (oversub_pods.py: admission by
# free memory units, GetPreferredAllocation, Allocate, the shim's claim, real processes). Sourced
# after tests/containers/lib.sh (BUILD, TMP, RUNDIR, start_daemon, wait_for, at_exit) with SRC
# set to the source tree. The plugin and the stand-in keep running while convgpud is restarted
# with another sharing factor: the plugin's next poll lists the new units, as on a node.
OVERSUB_STANDIN=$BUILD/bin/kubelet-standin
OVERSUB_PLUGIN=$BUILD/bin/convgpu-device-plugin
OVERSUB_DP=$TMP/device-plugins
OVERSUB_ST=$TMP/kubelet
OVERSUB_LIST=$OVERSUB_ST/convgpu.io_gpu-memory.list
OVERSUB_GPU=4GiB
OVERSUB_UNITS_F1=16 # 4 GiB in 256 MiB units

oversub_node_start() { # the stand-in and the plugin; convgpud comes with oversub_set_factor
    local p
    for p in "$OVERSUB_STANDIN" "$OVERSUB_PLUGIN"; do # built only where Debian's grpc++ is
        [ -x "$p" ] || skip "$p was not built (it needs libgrpc++-dev, protobuf-compiler-grpc, libprotobuf-dev)"
    done
    mkdir -p "$OVERSUB_DP" "$OVERSUB_ST" "$RUNDIR"
    "$OVERSUB_STANDIN" serve --dir "$OVERSUB_DP" --state "$OVERSUB_ST" >"$TMP/standin.log" 2>&1 &
    OVERSUB_STANDIN_PID=$!
    at_exit 'kill -TERM $OVERSUB_STANDIN_PID; wait $OVERSUB_STANDIN_PID'
    wait_for "the kubelet stand-in serves" "$WAIT_S" test -e "$OVERSUB_ST/ready"
    "$OVERSUB_PLUGIN" --plugin-dir "$OVERSUB_DP" --runtime-dir "$RUNDIR" --poll-ms 100 \
        >"$TMP/plugin.log" 2>&1 &
    OVERSUB_PLUGIN_PID=$!
    at_exit 'kill -TERM $OVERSUB_PLUGIN_PID; wait $OVERSUB_PLUGIN_PID'
}

oversub_healthy() { # oversub_healthy N: the stand-in's last list has exactly N Healthy units
    [ "$(grep -c ' Healthy$' "$OVERSUB_LIST" 2>/dev/null)" = "$1" ] &&
        [ "$(wc -l <"$OVERSUB_LIST")" = "$1" ]
}

oversub_set_factor() { # oversub_set_factor F: convgpud (re)started at F; kubelet sees 16 x F units
    local f=$1
    if [ -n "$DAEMON_PID" ]; then kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" || true; DAEMON_PID=; fi
    if [ "$f" = 1 ]; then start_daemon --emulate "$OVERSUB_GPU" --log-level info
    else start_daemon --emulate "$OVERSUB_GPU" --log-level info --oversubscribe "$f"; fi
    OVERSUB_WANT=$((OVERSUB_UNITS_F1 * f))
    wait_for "kubelet lists $OVERSUB_WANT Healthy memory units (F = $f)" "$WAIT_S" \
        oversub_healthy "$OVERSUB_WANT"
}

oversub_suspends() { # the suspensions convgpud decided since it started
    local v
    v=$(curl -s --unix-socket "$RUNDIR/control.sock" http://convgpu/metrics |
        sed -n 's/^convgpu_decisions_total{kind="suspend"} //p')
    echo "${v:-0}"
}

oversub_pods() { # oversub_pods PODS OUTDIR: runs the pods (in the foreground)
    python3 "$SRC/tests/k8s/oversub_pods.py" --standin "$OVERSUB_STANDIN" \
        --socket "$OVERSUB_DP/convgpu-memory.sock" --list "$OVERSUB_LIST" --rundir "$RUNDIR" \
        --out "$2" "$1"
}
