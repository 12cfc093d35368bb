# ab_builds.sh — the opening the A/B benchmarks share (allocate-ab.sh, roundtrip-ab.sh), sourced
# after their arguments are read: two builds as absolute paths, each checked for the programs
# the benchmark runs, a temporary directory, and the processes it starts (PIDS), stopped newest
# first at exit with the directory removed.

# ab_open SCRIPT TMP_PREFIX BASE_BUILD NEW_BUILD PROGRAM...: sets BUILDS, NAMES (base new), TMP
# and PIDS, and traps the cleanup; exits 1 naming the first missing program (AB_HINT, if set,
# says what else it needs).
ab_open() {
    local script=$1 prefix=$2 b p
    shift 2
    BUILDS=("$(cd "$1" && pwd)" "$(cd "$2" && pwd)")
    shift 2
    NAMES=(base new)
    for b in "${BUILDS[@]}"; do
        for p in "$@"; do
            [ -x "$b/$p" ] || { echo "$script: missing $b/$p (build it first${AB_HINT:+; $AB_HINT})" >&2; exit 1; }
        done
    done
    TMP=$(mktemp -d "/tmp/$prefix.XXXXXX")
    PIDS=()
    trap ab_cleanup EXIT
}

ab_cleanup() {
    set +e
    local k
    for ((k = ${#PIDS[@]} - 1; k >= 0; k--)); do
        kill -TERM "${PIDS[$k]}" 2>/dev/null && wait "${PIDS[$k]}" 2>/dev/null
    done
    rm -rf "$TMP"
}
