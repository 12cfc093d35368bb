# slurm_entry.sh — the opening every Slurm benchmark shares, sourced first thing:
#   . "$(dirname "$0")/slurm_entry.sh" "$@"
# Outside the cluster's namespaces it reads `[--record] BUILD_DIR`, exports the build and source
# directories and BENCH_RECORD, checks the programs are built, and re-runs the script under
# /tmp/convgpu-integ.lock: the Slurm tests' cluster is machine-wide (ports, bridges), so one at a
# time. Inside (tests/slurm/cluster.sh re-runs the script there) it only loads the cluster's and
# the benchmarks' helpers.
BENCH_NAME=$(basename "$0")
if [ -z "${CONVGPU_SLURM_INSIDE:-}" ]; then
    ARGS=("$@")
    RECORD=0
    if [ "${1:-}" = "--record" ]; then RECORD=1; shift; fi
    [ $# -eq 1 ] || { echo "usage: bench/$BENCH_NAME [--record] BUILD_DIR" >&2; exit 2; }
    export CONVGPU_BUILD_DIR
    CONVGPU_BUILD_DIR=$(cd "$1" && pwd)
    export CONVGPU_SOURCE_DIR
    CONVGPU_SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
    export BENCH_RECORD=$RECORD
    for p in convgpud convgpu convgpu-sample; do
        [ -x "$CONVGPU_BUILD_DIR/bin/$p" ] ||
            { echo "$BENCH_NAME: missing $CONVGPU_BUILD_DIR/bin/$p (build first)" >&2; exit 1; }
    done
    if [ -z "${CONVGPU_INTEG_LOCKED:-}" ]; then
        export CONVGPU_INTEG_LOCKED=1
        exec flock /tmp/convgpu-integ.lock "$0" "${ARGS[@]}"
    fi
fi
# shellcheck source=../tests/slurm/cluster.sh
. "${CONVGPU_SOURCE_DIR}/tests/slurm/cluster.sh"
. "${CONVGPU_SOURCE_DIR}/bench/section.sh"
