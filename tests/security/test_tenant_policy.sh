#!/usr/bin/env bash
# test_tenant_policy.sh — issue #35 items 3 and 4: what a tenant may set about its own
# containers is policy. Against a real daemon (8 GiB emulated GPU, --control-group CTL,
# --user-memory-quota 50%, --swap yes), A (uid 1101) and V (uid 1102) are members of CTL only.
#   3. A's 2 MiB exclusive container is refused (403: no allowance), so V's 1 GiB create is not
#      blocked (before: 201, the whole GPU held, V's create 409); once an operator allows A
#      exclusive GPUs, the same create is refused by the quota, because it counts as the 8 GiB
#      device it holds; root's exclusive create is not bound.
#   4. A cannot give its containers priority 9 (403 on create and on a raise) while V's 600 MiB
#      process runs, so nothing of V's is swapped out (before: A's priority-9 container had V's
#      running container moved to host memory); with an allowance (--max-priority 9) it can;
#      allowances survive a restart, only root sets them, bad values are refused.
#   Nit: A may report only its own process as a container's init (before: pid 1 was taken).
. "$(dirname "$0")/lib.sh"
ctl_group cgt-tp
cleanup_policy() { touch "$TMP/release.v" 2>/dev/null; cleanup; groupdel "$CTL" 2>/dev/null; }
trap cleanup_policy EXIT
SOCK=$RUNDIR/control.sock
swap_of() { api GET "/v1/containers/$1" | grep -o '"swap":"[a-z-]*"' | cut -d'"' -f4; }
TA=uid-1101
getent passwd 1101 >/dev/null && TA=$(getent passwd 1101 | cut -d: -f1)

start_daemon --emulate 8GiB --control-group "$CTL" --user-memory-quota 50% --swap yes \
    --swap-limit 2GiB

# ---- 3. exclusive GPUs -------------------------------------------------------------------------
r=$(capi 1101 POST /v1/containers '{"gpu_memory":"2MiB","exclusive":true}')
check "A's 2 MiB exclusive container is refused without an allowance ($(status "$r"))" \
    test "$(status "$r")" = 403
check "... saying how an operator allows it" grep -q "tenant set $TA --exclusive yes" <<<"$r"
r=$(capi 1102 POST /v1/containers '{"gpu_memory":"1GiB","name":"v-big"}')
check "V's 1 GiB create is not blocked ($(status "$r"))" test "$(status "$r")" = 201
r=$(capi 1101 PUT "/v1/tenants/$TA" '{"exclusive":true}')
check "A cannot give itself the allowance ($(status "$r"))" test "$(status "$r")" = 403
r=$(cg tenant set "$TA" --exclusive yes)
check "root allows A's tenant exclusive GPUs ($r)" grep -q "exclusive allowed" <<<"$r"
capi 1102 DELETE "/v1/containers/v-big" >/dev/null
r=$(capi 1101 POST /v1/containers '{"gpu_memory":"2MiB","exclusive":true}')
check "allowed, A's exclusive 2 MiB still counts as the whole 8 GiB GPU: over its 4 GiB quota ($(status "$r"))" \
    test "$(status "$r")" = 403
check "... the quota says so" grep -q '"bound":"user-memory-quota".*"requested":8589934592' <<<"$r"
r=$(api POST /v1/containers '{"gpu_memory":"2MiB","exclusive":true,"name":"root-excl"}')
check "root's exclusive container is not bound ($(status "$r"))" test "$(status "$r")" = 201
api DELETE /v1/containers/root-excl >/dev/null

# ---- 4. priorities -----------------------------------------------------------------------------
# The emulated GPU's shared state is root's file; on a real GPU V would open the driver instead.
chmod 0755 "$RUNDIR/emu" && chmod 0666 "$RUNDIR/emu/state"
rm -f "$TMP/release.v"
as 1102 "$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --name v-run --gpu-memory 1GiB -- \
    "$BUILD/bin/convgpu-sample" --size 600MiB --hold-until "$TMP/release.v" >"$TMP/v.out" 2>&1 &
V_PID=$!
BG_PIDS+=("$V_PID")
v_holds() { local c; c=$(api GET /v1/containers/v-run) && grep -q '"used":[1-9]' <<<"$c"; }
check "V's process holds its 600 MiB" wait_for "V's use" "$WAIT_S" v_holds ||
    echo "V's sample: $(cat "$TMP/v.out")"
r=$(capi 1101 POST /v1/containers '{"gpu_memory":"7GiB","priority":9}')
check "A's priority-9 container is refused ($(status "$r"))" test "$(status "$r")" = 403
check "... naming the ceiling and how to raise it" grep -q "above what tenant '$TA' may give its containers (0).*--max-priority" <<<"$r"
r=$(capi 1101 POST /v1/containers '{"gpu_memory":"1GiB","name":"a-low"}')
check "A's priority-0 container is created ($(status "$r"))" test "$(status "$r")" = 201
r=$(capi 1101 PUT /v1/containers/a-low/limit '{"priority":9}')
check "A cannot raise it to priority 9 ($(status "$r"))" test "$(status "$r")" = 403
r=$(capi 1101 PUT /v1/containers/a-low/limit '{"priority":0}')
check "... and may set what its ceiling allows ($(status "$r"))" test "$(status "$r")" = 200
check "V's running container stays in GPU memory" test "$(swap_of v-run)" = in
r=$(cg tenant set "$TA" --max-priority 9)
check "root grants A's tenant priorities up to 9 ($r)" grep -q "max priority 9" <<<"$r"
r=$(capi 1101 PUT /v1/containers/a-low/limit '{"priority":9}')
check "granted, A may raise its container to 9 ($(status "$r"))" test "$(status "$r")" = 200
touch "$TMP/release.v"
wait "$V_PID" 2>/dev/null || true

# ---- a tenant reports only its own process as a container's init ------------------------------
r=$(capi 1101 POST /v1/containers/a-low/start '{"pid":1}')
check "A cannot name pid 1 as its container's init ($(status "$r"))" test "$(status "$r")" = 403
setpriv --reuid=1101 --regid=1101 --groups="$CTL_GID" sleep 600 &
A_SLEEP=$!
BG_PIDS+=("$A_SLEEP")
runs_as_a() { grep -Eq '^Uid:\s+1101\s' "/proc/$A_SLEEP/status"; }
wait_for "A's process runs as uid 1101" "$WAIT_S" runs_as_a
r=$(capi 1101 POST /v1/containers/a-low/start "{\"pid\":$A_SLEEP}")
check "... and may name its own ($(status "$r"))" test "$(status "$r")" = 200

# ---- the allowances: only root, checked input, kept across a restart -------------------------
for body in '{"max_priority":10}' '{"max_priority":-1}' '{"max_priority":"9"}' '{"exclusive":"yes"}' \
    '{"exclusive":1}' '{}' '{"weight":1,"max_priority":3,"x":1}'; do
    r=$(api PUT "/v1/tenants/$TA" "$body")
    check "PUT $body is refused (400)" test "$(status "$r")" = 400
done
for bad in "--max-priority 10" "--max-priority -1" "--exclusive maybe" "--weight 0" "--colour 3"; do
    # shellcheck disable=SC2086
    cg tenant set "$TA" $bad >/dev/null 2>&1 && rc=0 || rc=$?
    check "convgpu tenant set $bad: usage error (exit $rc)" test "$rc" = 2
done
before=$(api GET "/v1/tenants/$TA")
check "the allowances are shown" grep -q '"max_priority":9,"exclusive_allowed":true' <<<"$before"
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true; DAEMON_PID=
start_daemon --emulate 8GiB --control-group "$CTL" --user-memory-quota 50% --swap yes \
    --swap-limit 2GiB
after=$(api GET "/v1/tenants/$TA")
check "after a restart the allowances are the same" grep -q '"max_priority":9,"exclusive_allowed":true' <<<"$after"
r=$(cg tenant set "$TA" --max-priority none --exclusive no)
check "root takes them back (none: the node's ceiling) ($r)" grep -q "max priority 0, exclusive not allowed" <<<"$r"
r=$(capi 1101 POST /v1/containers '{"gpu_memory":"64MiB","priority":1}')
check "and A is bound by the node's ceiling again ($(status "$r"))" test "$(status "$r")" = 403
finish
