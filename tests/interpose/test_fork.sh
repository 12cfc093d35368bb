# test_fork.sh — after fork the child is its own process to the daemon: its allocations and its
# exit never touch the parent's account; the parent keeps allocating and freeing normally.
. "$(dirname "$0")/lib.sh"
need_emulator
export CONVGPU_EMU_CONTEXT=2MiB
start_daemon --emulate 2GiB
expect_rc 0 "fork + exec child allocates on its own; parent's account intact" run_in 1GiB "$PROBE" fork 100MiB
expect_rc 2 "the child is held to the same container limit" run_in 300MiB "$PROBE" fork 200MiB
finish
