#!/usr/bin/env bash
# test_exec.sh — exec replaces a process's image and the driver frees its memory; convgpu must
# too, even though the new image reconnects with the same pid at once. With a limit that holds
# only one image's memory, a process that allocates and then execs a program allocating as much
# again must succeed — repeatedly, since the daemon may see the new image's request before the
# old connection's hang-up.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=4MiB
start_daemon --emulate 512MiB
for i in 1 2 3 4 5 6 7 8 9 10; do
    "$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --quiet --gpu-memory 128MiB -- \
        "$BUILD/tests/e2e/execalloc" $((100 << 20)) "$BUILD/bin/convgpu-sample" --size 100MiB \
        --touch 1MiB --quiet >"$TMP/exec.$i.out" 2>&1 && rc=0 || rc=$?
    check "round $i: the exec'd image gets the memory back (exit $rc)" test "$rc" = 0
done
check "device empty afterwards" bash -c "$BUILD/bin/convgpu --runtime-dir $RUNDIR devices --json | grep -q '\"assigned\": 0'"
finish
