# containerd_lib.sh — a private real containerd 1.6 for the Kubernetes tests and benchmarks:
# its own root, state, socket and configuration under $TMP/containerd (sourced after
# tests/containers/lib.sh, which provides TMP, at_exit, wait_for, skip, make_rootfs). The
# configuration is the one docs/KUBERNETES.md gives an operator: a CRI runtime `convgpu` (the runc
# v2 shim with BinaryName = convgpu-runtime). ctr does not go through the CRI plugin, so `ctr run`
# names the same pair itself (--runtime io.containerd.runc.v2 --runc-binary convgpu-runtime); the
# test checks that containerd read the CRI entry (config dump). Its environment holds what the
# node's drop-in (packaging/k8s/containerd-convgpu.conf) sets, CONVGPU_SHIM_MODE=kubernetes, and
# ctr_pod_args gives `ctr run` the annotations containerd's CRI plugin writes into a pod's
# containers (ctr writes none). Stopped, its tasks and containers
# removed, at exit; the system's containerd and its state are never touched.
CTD=$TMP/containerd
CTD_SOCK=$CTD/containerd.sock
CTD_NS=convgpu-test
CTD_PID=
CTD_SNAP=native # overlayfs may not nest on a CI machine's root; native (copies) always works
CTD_STATE=${CTD_STATE:-$CTD/state} # a node keeps it in /run (tmpfs): the benchmark does too

ctd_config() { # ctd_config SHIM: the configuration, with the convgpu runtime entry
    cat <<TOML
version = 2
root = "$CTD/root"
state = "$CTD_STATE"
[grpc]
  address = "$CTD_SOCK"
[ttrpc]
  address = "$CTD/ttrpc.sock"
[debug]
  address = "$CTD/debug.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/library/cg-sample:1"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CTD/cni/bin"
    conf_dir = "$CTD/cni/conf"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "$CTD_SNAP"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.convgpu]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.convgpu.options]
        BinaryName = "$1"
TOML
}

ctr_() { ctr --address "$CTD_SOCK" --namespace "$CTD_NS" "$@"; }

# ctr_pod_args UID NAMESPACE [SANDBOX]: `ctr run` options for the annotations containerd 1.6's CRI plugin
# writes into every container of a pod, after the pod's own (so a pod cannot set them):
# container-type, sandbox-id, sandbox-uid (1.6.11 and later), sandbox-namespace, sandbox-name
# (containerd's pkg/cri/server/container_create_linux.go; docs/KUBERNETES.md, "containerd").
# SANDBOX tells the pod's sandboxes apart (kubelet re-creates one with a new id, same pod UID).
ctr_pod_args() {
    local sandbox
    sandbox=$(printf '%s/%s' "$1" "${3:-}" | sha256sum | cut -c1-64)
    printf -- '--annotation\n%s\n' "io.kubernetes.cri.container-type=container" \
        "io.kubernetes.cri.sandbox-id=$sandbox" "io.kubernetes.cri.sandbox-uid=$1" \
        "io.kubernetes.cri.sandbox-namespace=$2" "io.kubernetes.cri.sandbox-name=pod-$1"
}

stop_containerd() {
    [ -n "$CTD_PID" ] || return 0
    local t
    for t in $(ctr_ tasks list -q 2>/dev/null); do ctr_ tasks kill -s KILL "$t"; done
    for t in $(ctr_ tasks list -q 2>/dev/null); do ctr_ tasks delete -f "$t"; done
    for t in $(ctr_ containers list -q 2>/dev/null); do ctr_ containers delete "$t"; done
    kill -TERM "$CTD_PID"
    wait "$CTD_PID"
    CTD_PID=
}

start_containerd() { # start_containerd SHIM; skips (77) where containerd cannot run
    command -v containerd >/dev/null && command -v ctr >/dev/null ||
        skip "containerd is not installed (apt-get install containerd)"
    command -v runc >/dev/null || skip "runc is not installed (apt-get install runc)"
    [ "$(id -u)" = 0 ] || skip "containerd needs root"
    mkdir -p "$CTD/cni/bin" "$CTD/cni/conf"
    ctd_config "$1" >"$CTD/config.toml"
    # The shims containerd starts inherit its environment: that is how convgpu-runtime finds
    # this test's convgpud (an installed node uses the default /run/convgpu).
    # CTD_ENV: more NAME=VALUE words for containerd's environment (a node's systemd drop-ins).
    env CONVGPU_RUNTIME_DIR="$RUNDIR" CONVGPU_SHIM_MODE=kubernetes ${CTD_ENV[@]+"${CTD_ENV[@]}"} \
        containerd --config "$CTD/config.toml" --log-level info >"$CTD/containerd.log" 2>&1 &
    CTD_PID=$!
    at_exit stop_containerd
    if ! wait_for "containerd answers" "$WAIT_S" ctr_ version; then
        tail -n 20 "$CTD/containerd.log"
        skip "containerd did not start here (its log above)"
    fi
}

ctd_image() { # ctd_image NAME:TAG: the make_rootfs image, imported as docker.io/library/NAME:TAG
    [ -d "$TMP/img" ] || make_rootfs "$TMP/img"
    tar -C "$TMP/img" -cf "$TMP/img-rootfs.tar" .
    # The node image's archive writer (docs/PACKAGING.md): an OCI layout ctr imports.
    python3 "$(dirname "${BASH_SOURCE[0]}")/../../packaging/image/oci_archive.py" \
        "$TMP/img-rootfs.tar" "$TMP/img.tar" "$1" /bin/sh
    ctr_ images import --snapshotter "$CTD_SNAP" "$TMP/img.tar" >/dev/null
}
