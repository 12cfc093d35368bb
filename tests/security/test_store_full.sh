#!/usr/bin/env bash
# test_store_full.sh — the control API never acknowledges a change that state.db did not take.
# The runtime directory is a real 16 MiB tmpfs; a file fills it to the last page, so SQLite's
# next WAL append fails with "database or disk is full".
#
# With the disk full:
#   1. DELETE of a container, PUT .../limit (a lowering, a raise, a compute share), POST
#      .../start and PUT /v1/policy each answer 507 with a JSON error, and GET shows nothing
#      changed.
#   2. the removal that cannot be refused (a container whose auto_remove owner exits) still
#      happens, loudly (the log says state.db still lists it).
# Then the daemon is killed (-9), the space freed and the daemon started again on the same
# directory: the state is what the API last said (the refused changes absent, the removed
# container not resurrected). With space, the same calls succeed: the row the owner's exit
# owed is deleted by the next write, and after a clean stop and restart the state is again
# what the API said.
. "$(dirname "$0")/lib.sh"
MiB=$((1024 * 1024))
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 (the CLI) missing"; exit 77; }
mkdir -p "$RUNDIR"
mount -t tmpfs -o size=16m,mode=0755 convgpu-test "$RUNDIR" || { echo "SKIP: cannot mount a tmpfs"; exit 77; }
MOUNTED=1
OWNER=
cleanup_mount() {
    set +e
    [ -n "$OWNER" ] && kill -KILL "$OWNER" 2>/dev/null
    if [ -n "$DAEMON_PID" ]; then kill -KILL "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=; fi
    [ -n "$MOUNTED" ] && umount "$RUNDIR"
    cleanup
}
trap cleanup_mount EXIT

# The daemon writes compact JSON; the fields read here occur once, at the top level, so grep
# reads them (python3 takes seconds to start on a loaded 2-core machine).
status() { echo "${1%% *}"; }
top_field() { grep -o "\"$1\":\"\?[^,\"}]*" | head -n 1 | sed 's/.*://; s/"//'; }
is_json_error() { [[ "$1" =~ ^[0-9]+\ \{\"error\":\"[^\"]+\"\} ]]; }
limit_of() { api GET "/v1/containers/$1" | top_field limit; }
field_of() { api GET "/v1/containers/$1" | top_field "$2"; }
policy() { api GET /v1/policy | top_field resume; }
rows() { sqlite3 "$RUNDIR/state.db" "SELECT name || ':' || limit_bytes || ':' || init_pid FROM containers ORDER BY seq" | tr '\n' ' '; }
fill() { dd if=/dev/zero of="$RUNDIR/fill" bs=4096 >/dev/null 2>&1 || true; }
full() { [ "$(stat -f -c %a "$RUNDIR")" = 0 ]; }

start_daemon --emulate 1GiB
check "policy starts as fifo" test "$(policy)" = fifo
A=$(create_for keep 256MiB 1101)
B=$(create_for resize 128MiB 1102)
C=$(create_for owned 64MiB 1101)
sleep infinity &
OWNER=$!
r=$(api POST "/v1/containers/$C/start" "{\"pid\":$OWNER,\"auto_remove\":true}")
check "C's init is watched (auto_remove)" test "$(status "$r")" = 200
check "state.db has the three rows" test "$(rows)" = "keep:$((256 * MiB)):0 resize:$((128 * MiB)):0 owned:$((64 * MiB)):$OWNER "

# ---- 1. refused while the disk is full ---------------------------------------------------------
fill
check "the runtime directory's tmpfs is full" full
r=$(api DELETE "/v1/containers/$A")
check "DELETE on a full disk: 507 ($r)" test "$(status "$r")" = 507
check "... with a JSON error" is_json_error "$r"
check "... and the container is still there" test "$(limit_of "$A")" = $((256 * MiB))
r=$(api PUT "/v1/containers/$B/limit" '{"gpu_memory":"64MiB"}')
check "lowering a limit on a full disk: 507 ($r)" test "$(status "$r")" = 507
check "... with a JSON error" is_json_error "$r"
r=$(api PUT "/v1/containers/$B/limit" '{"gpu_memory":"200MiB"}')
check "raising a limit on a full disk: 507" test "$(status "$r")" = 507
check "... and the limit is unchanged" test "$(limit_of "$B")" = $((128 * MiB))
check "... and so is its assignment" test "$(field_of "$B" assigned)" = $((128 * MiB))
r=$(api PUT "/v1/containers/$B/limit" '{"gpu_compute":30,"compute_mode":"hard"}')
check "setting a compute share on a full disk: 507" test "$(status "$r")" = 507
check "... and the container has no share" test "$(field_of "$B" gpu_compute)" = null
r=$(api PUT "/v1/containers/$B/limit" '{"gpu_memory":"64MiB","gpu_compute":30}')
check "a limit and a share together on a full disk: 507, neither applied" \
    test "$(status "$r") $(limit_of "$B") $(field_of "$B" gpu_compute)" = "507 $((128 * MiB)) null"
r=$(api POST "/v1/containers/$B/start" "{\"pid\":$$}")
check "POST .../start on a full disk: 507" test "$(status "$r")" = 507
check "... and no init pid is recorded" test -z "$(field_of "$B" init_pid)"
r=$(api PUT /v1/policy '{"resume":"best-fit"}')
check "PUT /v1/policy on a full disk: 507 ($r)" test "$(status "$r")" = 507
check "... with a JSON error" is_json_error "$r"
check "... and the policy is unchanged" test "$(policy)" = fifo
check "the daemon logged what SQLite said" grep -q "database or disk is full" "$DAEMON_LOG"
r=$(api PUT "/v1/containers/$B/limit" '{"gpu_memory":"2GiB"}')
check "a limit the core refuses is still a 409 (not a storage error)" test "$(status "$r")" = 409

# ---- 2. a removal that cannot be refused ---------------------------------------------------------
kill -KILL "$OWNER"; wait "$OWNER" 2>/dev/null || true; OWNER=
wait_for "C removed after its owner exited" "$WAIT_S" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --unix-socket '$RUNDIR/control.sock' http://convgpu/v1/containers/$C)\" = 404 ]"
check "... and the log says state.db still lists it" grep -q "container $C: removed (owner exited), but state.db still lists it" "$DAEMON_LOG"
check "... which it does" grep -q "owned:" <<<"$(rows)"

# ---- 3. restart: the state is what the API said ---------------------------------------------------
stop_daemon_hard
rm -f "$RUNDIR/fill"
start_daemon --emulate 1GiB
check "after kill -9 and restart, A is back with its limit (its DELETE was refused)" test "$(limit_of "$A")" = $((256 * MiB))
check "... B has its old limit" test "$(limit_of "$B")" = $((128 * MiB))
check "... B has no init pid" test -z "$(field_of "$B" init_pid)"
check "... the policy is fifo" test "$(policy)" = fifo
check "... C (owner exited) is not resurrected" test "$(status "$(api GET "/v1/containers/$C")")" = 404
check "... and its row is gone" test "$(rows)" = "keep:$((256 * MiB)):0 resize:$((128 * MiB)):0 "

# ---- 4. with space, the same calls succeed and persist ------------------------------------------------
sleep infinity &
OWNER=$!
D=$(create_for owed 64MiB 1102)
r=$(api POST "/v1/containers/$D/start" "{\"pid\":$OWNER,\"auto_remove\":true}")
check "D's init is watched" test "$(status "$r")" = 200
fill
kill -KILL "$OWNER"; wait "$OWNER" 2>/dev/null || true; OWNER=
wait_for "D removed after its owner exited (disk full)" "$WAIT_S" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --unix-socket '$RUNDIR/control.sock' http://convgpu/v1/containers/$D)\" = 404 ]"
check "... its row is still in state.db" grep -q "owed:" <<<"$(rows)"
rm -f "$RUNDIR/fill"
r=$(api PUT /v1/policy '{"resume":"best-fit"}')
check "PUT /v1/policy with space: 200" test "$(status "$r")" = 200
check "... and the row D's removal owed is deleted by that write" test "$(rows)" = "keep:$((256 * MiB)):0 resize:$((128 * MiB)):0 "
r=$(api DELETE "/v1/containers/$A")
check "DELETE with space: 200" test "$(status "$r")" = 200
r=$(api PUT "/v1/containers/$B/limit" '{"gpu_memory":"64MiB"}')
check "lowering a limit with space: 200" test "$(status "$r")" = 200
r=$(api POST "/v1/containers/$B/start" "{\"pid\":$$}")
check "POST .../start with space: 200" test "$(status "$r")" = 200
# A clean stop this time: under ASan it is also the leak check of what the store kept.
kill -TERM "$DAEMON_PID"; rc=0; wait "$DAEMON_PID" || rc=$?; DAEMON_PID=
check "the daemon stops cleanly (exit $rc)" test "$rc" = 0
start_daemon --emulate 1GiB
check "after a clean stop and restart, A stays removed" test "$(status "$(api GET "/v1/containers/$A")")" = 404
check "... B has its new limit" test "$(limit_of "$B")" = $((64 * MiB))
check "... and its init pid" test "$(field_of "$B" init_pid)" = $$
check "... the policy is best-fit" test "$(policy)" = best-fit
stop_daemon_hard
umount "$RUNDIR" && MOUNTED=
finish
