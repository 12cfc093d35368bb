#!/usr/bin/env bash
# check-load.sh — runs a command (by default `make test`) with busy loops beside it, as on a
# shared CI machine or a developer's laptop doing other work: the tests must pass there too,
# since they wait for conditions, never for durations. `make check-load` calls it.
#
# Usage: scripts/check-load.sh [COMMAND...]   (LOAD_PROCS=N busy loops, default 2)
#
# Promise: the busy loops never outlive this script, whichever way it ends: the command passing
# or failing, Ctrl-C, a TERM sent to this script alone (the traps stop them at once), or a
# SIGKILL (each loop checks that this script still runs). The command runs in a process group
# of its own, so a signal to this script reaches it too (a terminal's Ctrl-C reaches both).
# Exit status: the command's, or 128 + the signal's number.
set -u

LOAD_PROCS=${LOAD_PROCS:-2}
case $LOAD_PROCS in '' | *[!0-9]*) echo "check-load: LOAD_PROCS must be a number" >&2; exit 2 ;; esac
[ "$#" -gt 0 ] || set -- make test

LOAD_PIDS=()
CMD_PID=
# shellcheck disable=SC2317 # called by the traps below
stop_load() {
    local p
    for p in "${LOAD_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    for p in "${LOAD_PIDS[@]}"; do wait "$p" 2>/dev/null; done
    [ "${#LOAD_PIDS[@]}" -eq 0 ] || echo "check-load: stopped the ${#LOAD_PIDS[@]} busy loops"
    LOAD_PIDS=()
}
# shellcheck disable=SC2317 # called by the traps below
on_signal() { # on_signal NAME NUMBER: pass the signal on to the command, stop, exit 128+NUMBER
    trap - INT TERM
    if [ -n "$CMD_PID" ]; then
        kill -"$1" -- -"$CMD_PID" 2>/dev/null
        wait "$CMD_PID" 2>/dev/null
    fi
    stop_load
    exit $((128 + $2))
}
trap stop_load EXIT
trap 'on_signal INT 2' INT
trap 'on_signal TERM 15' TERM

# A busy loop that also ends by itself once this script is gone (even by SIGKILL, which no
# trap sees): one CPU's worth of work while it lasts.
busy_loop() { while kill -0 "$SCRIPT_PID" 2>/dev/null; do :; done; }
SCRIPT_PID=$$
for _ in $(seq 1 "$LOAD_PROCS"); do
    busy_loop &
    LOAD_PIDS+=("$!")
done
echo "check-load: $LOAD_PROCS busy loops (pids ${LOAD_PIDS[*]}) beside: $* ($(nproc) CPUs)"

t0=$(date +%s)
set -m # the command gets its own process group (see above)
"$@" &
CMD_PID=$!
set +m
# `wait` returns early when a trapped signal arrives; the trap then ends the script.
rc=0
wait "$CMD_PID" || rc=$?
CMD_PID=
secs=$(($(date +%s) - t0))
stop_load
if [ "$rc" -eq 0 ]; then result=passed; else result="FAILED (exit $rc)"; fi
echo "check-load: $* $result in ${secs} s with $LOAD_PROCS busy loops"
exit "$rc"
