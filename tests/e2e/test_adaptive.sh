#!/usr/bin/env bash
# test_adaptive.sh — the adaptive fair share fed by profiles (issue 21 items 2 and 3; seed 001's
# Algorithm 1 with Eq. 1; docs/SCHEDULING.md, "Tenants and fair share") with a real daemon and
# real processes on a 1 GiB emulated GPU. Before any profile, tenants are weighed by their job
# counts alone (alice 1 job, bob 2: a third and two thirds). Then each tenant runs its job three
# times (alice's peaks 306 MiB, bob's 66 MiB), and with one job each running again the daemon
# hands the core both profiles at the containers' start: GET /v1/tenants shows the figures each
# tenant is weighed by, and the shares are Eq. 1 recomputed from them. Forgetting alice's profile
# (`convgpu profile rm`) weighs her by her job count again at once; a daemon killed and restarted
# gives the same shares from the same profiles. Bad --fair-interval values are refused.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=6MiB
start_daemon --emulate 1GiB --fair-share adaptive
SAMPLE=$BUILD/bin/convgpu-sample
MiB=1048576
CAP=$((1024 * MiB))

tenant_json() { api GET "/v1/tenants/$1" | cut -d' ' -f2-; }
tenant_field() { tenant_json "$1" | json_get "$2"; }
used_is() { [ "$(container_field "$1" used)" = "$2" ]; }

# held NAME TENANT SIZE: a container of TENANT (limit SIZE + 32 MiB) whose process allocates SIZE
# MiB and holds it until the test touches $TMP/release.NAME; returns once the daemon has seen the
# whole use.
declare -A RUNNER
held() {
    "$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --quiet --name "$1" --tenant "$2" \
        --gpu-memory $(($3 + 32))MiB -- "$SAMPLE" --size "$3MiB" --touch 1MiB \
        --hold-until "$TMP/release.$1" --quiet >"$TMP/$1.out" 2>&1 &
    RUNNER[$1]=$!
    wait_for "$1 uses $3 MiB + its context" "$WAIT_S" used_is "$1" $((($3 + 6) * MiB)) || true
    used_is "$1" $((($3 + 6) * MiB)) || fail "$1 never used its memory: $(cat "$TMP/$1.out")"
}
release() { # release NAME...: each frees and exits; its runner removes the container
    local n
    for n in "$@"; do touch "$TMP/release.$n"; done
    for n in "$@"; do
        wait "${RUNNER[$n]}" || fail "$n failed: $(cat "$TMP/$n.out")"
    done
}
# eq1 ALICE_JOBS BOB_JOBS: the share of alice and of bob (bytes) Eq. 1 gives from the job counts
# and the figures GET /v1/tenants shows (the core's own arithmetic, in the same order).
eq1() {
    python3 - "$CAP" "$1" "$2" "$(tenant_json alice)" "$(tenant_json bob)" <<'EOF'
import json, sys
cap, ga, gb = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
ts = [json.loads(sys.argv[4]), json.loads(sys.argv[5])]
g = [ga, gb]
prof = [t["adaptive"] for t in ts]
psum = sum(p["peak"] for p in prof if p)
tsum = sum(p["duration_s"] for p in prof if p)
sets = []
for gi, p in zip(g, prof):
    s = gi / (ga + gb)
    if p:
        s = (s + p["peak"] / psum + p["duration_s"] / tsum) / 3
    sets.append(s)
wsum = 0.0
for s in sets:
    wsum += 1 * s
out = []
for s in sets:
    f = cap * (1 * s / wsum)
    out.append(str(cap if f >= cap else int(f)))
print(" ".join(out))
EOF
}

out=$(api GET /v1/policy)
check "policy shows the adaptive fair share" grep -q '"fair_share": *"adaptive"' <<<"${out#* }"

# --- no profiles: job counts alone (C0 = 1) ---
held a1 alice 100
held b1 bob 20
held b2 bob 20
check "no profile yet: alice's share is a third (1 job of 3)" \
    test "$(tenant_field alice share)" = $((CAP / 3))
check "no profile yet: bob's share is two thirds (2 jobs of 3)" \
    test "$(tenant_field bob share)" = $((CAP * 2 / 3))
check "alice is weighed by her job count alone (adaptive: null)" \
    grep -q '"adaptive": *null' <<<"$(tenant_json alice)"
release a1 b1 b2

# --- three runs each teach the profiles ---
for i in 1 2 3; do
    held pa$i alice 300
    held pb$i bob 60
    release pa$i pb$i
done
prof=$(cg profile --json)
check "alice's job has a profile of 4 runs (a1 and three more), peak 306 MiB" python3 -c "
import json,sys
p=[x for x in json.loads(sys.argv[1]) if x['tenant']=='alice'][0]
sys.exit(not (p['runs']==4 and p['peak']==306*$MiB))" "$prof"

# --- one job each, running again: weighed by their profiles from their start ---
held a2 alice 10
held b3 bob 10
# Both tenants' figures: b3 may start within a second of a2, and the daemon updates at most once
# a second after a start (adaptive.c), so alice's alone can be in before bob's.
figures() { # figures -> "ALICE_RUNS BOB_RUNS" as GET /v1/tenants shows them
    local t
    for t in alice bob; do
        tenant_json "$t" | python3 -c 'import json,sys; a=json.load(sys.stdin)["adaptive"]; print(a and a["runs"])'
    done | paste -sd' '
}
wait_for "alice's and bob's shares follow their profiles (4 and 5 runs)" "$WAIT_S" \
    eval '[ "$(figures)" = "4 5" ]'
a=$(tenant_json alice)
check "GET /v1/tenants shows alice's figures: 4 runs, peak 306 MiB (the window's highest)" python3 -c "
import json,sys
a=json.loads(sys.argv[1])['adaptive']
sys.exit(not (a['runs']==4 and a['peak']==306*$MiB and 0 < a['duration_s'] < 600))" "$a"
b=$(tenant_json bob)
check "bob's figures: peak 66 MiB" python3 -c "
import json,sys; sys.exit(json.loads(sys.argv[1])['adaptive']['peak'] != 66*$MiB)" "$b"
want=$(eq1 1 1)
got="$(tenant_field alice share) $(tenant_field bob share)"
check "the shares are Eq. 1 over the profiles ($want)" test "$got" = "$want"
check "and no longer the job counts' halves" test "$(tenant_field alice share)" != $((CAP / 2))
check "the daemon's log says what alice is weighed by" \
    grep -q 'adaptive fair share: tenant alice weighed by its running jobs. profiles (mean peak 306 MiB' "$TMP/daemon.log"

# --- a daemon killed and restarted (with an interval of its own) weighs them the same ---
stop_daemon_hard
start_daemon --emulate 1GiB --fair-share adaptive --fair-interval 5
wait_for "alice's and bob's figures are back after the restart" "$WAIT_S" \
    eval '[ "$(figures)" = "4 5" ]'
got="$(tenant_field alice share) $(tenant_field bob share)"
check "after a restart the shares are the same Eq. 1 ($want)" test "$got" = "$want"

# --- a forgotten profile: back to the job count, without waiting for the interval ---
cg profile rm convgpu-sample --tenant alice >/dev/null
wait_for "alice is weighed by her job count again" "$WAIT_S" \
    bash -c "curl -s --unix-socket '$RUNDIR/control.sock' http://convgpu/v1/tenants/alice | grep -q '\"adaptive\": *null'"
want=$(eq1 1 1)
got="$(tenant_field alice share) $(tenant_field bob share)"
check "after profile rm the shares are Eq. 1 with alice's job count alone ($want)" test "$got" = "$want"
release a2 b3

# --- bad --fair-interval: refused with a clear error ---
set +e
for v in 0 -1 abc 86401 1e9 ''; do
    timeout 60 "$BUILD/bin/convgpud" --runtime-dir "$TMP/bad" --foreground --fair-interval "$v" \
        >"$TMP/bad.out" 2>&1
    rc=$?
    check "--fair-interval '$v' is refused (exit $rc)" \
        bash -c "[ $rc -ne 0 ] && grep -q 'fair-interval takes seconds from 1 to 86400' '$TMP/bad.out'"
done
set -e
check "--help documents --fair-interval" \
    bash -c "'$BUILD/bin/convgpud' --help | grep -q -- '--fair-interval SECONDS'"

finish
