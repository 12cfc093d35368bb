#!/usr/bin/env bash
# test_docker_concurrent.sh — 20 Docker containers started concurrently (`convgpu docker run -d`
# in parallel) on a private dockerd (lib.sh: start_dockerd), on an emulated 512MiB device (6MiB
# context charge) whose size makes some of them wait: limits 48/64/80/96MiB (1440MiB in all),
# each container uses its limit minus 16MiB. The containers wait at a gate (a file on a
# read-only bind mount) until all 20 are up, so registration and the run are checked apart; each
# then holds its memory until the test has seen some of them suspended (a second gate file):
#   - every container is registered under its Docker id with its own limit;
#   - at every consistent snapshot (ps unchanged around a devices read) the device's assigned and
#     used are the sums over its containers, assigned never exceeds the capacity;
#   - after the gate opens some are suspended (the device is too small for all), and every one
#     exits 0 (nobody ran out of memory);
#   - after `docker rm` of all of them, nothing is registered and the device is back to
#     assigned 0 / used 0.
. "$(dirname "$0")/lib.sh"
docker_prereqs
export CONVGPU_EMU_CONTEXT=6MiB
start_daemon --emulate 512MiB
start_dockerd
docker_images
"$DOCKER" image inspect cg-sample:1 >/dev/null && pass "private dockerd started, image imported" ||
    fail "image not imported"
N=20
MiB=$((1 << 20))
mkdir -p "$TMP/ids"
limit_of() { echo $((48 + 16 * ($1 % 4))); } # MiB

# snapshot: prints "ok" when the device's assigned/used are the sums over the containers in a
# consistent snapshot (ps --json read twice around devices --json, equal accounting fields),
# plus "suspended=K running=R registered=N".
snapshot() {
    python3 - "$BUILD/bin/convgpu" "$RUNDIR" <<'EOF'
import json, subprocess, sys
cli, run = sys.argv[1], sys.argv[2]
def get(*a):
    return json.loads(subprocess.run([cli, "--runtime-dir", run, *a, "--json"], check=True,
                                     capture_output=True, text=True).stdout)
key = lambda ps: sorted((c["id"], c["assigned"], c["used"], c["state"]) for c in ps)
for _ in range(100):
    p1 = get("ps"); d = get("devices")[0]; p2 = get("ps")
    if key(p1) != key(p2):
        continue
    sa = sum(c["assigned"] for c in p1); su = sum(c["used"] for c in p1)
    st = [c["state"] for c in p1]
    bad = []
    if d["assigned"] != sa: bad.append(f"device assigned {d['assigned']} != sum {sa}")
    if d["used"] != su: bad.append(f"device used {d['used']} != sum {su}")
    if d["assigned"] > d["capacity"]: bad.append(f"assigned {d['assigned']} > capacity {d['capacity']}")
    if d["containers"] != len(p1): bad.append(f"device containers {d['containers']} != {len(p1)}")
    print("ok" if not bad else "BAD " + "; ".join(bad),
          f"suspended={st.count('suspended')} running={st.count('running')} registered={len(p1)}",
          f"assigned={sa} used={su}")
    sys.exit(0)
print("BAD no consistent snapshot in 100 tries")
EOF
}

# --- start 20 at once ---
t0=$(date +%s%N)
pids=()
for i in $(seq "$N"); do
    L=$(limit_of "$i")
    ( dr -d -v "$GATE:/gate:ro" --gpu-memory "${L}MiB" cg-sample:1 sh -c \
        "while [ ! -e /gate/go ]; do sleep 0.05; done; exec convgpu-sample --size $((L - 16))MiB --touch 1MiB --hold-until /gate/release --quiet" \
        >"$TMP/ids/$i" 2>"$TMP/ids/$i.err" ) &
    pids+=($!)
done
started=0
for p in "${pids[@]}"; do wait "$p" && started=$((started + 1)); done
echo "20 x docker run -d: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
check "all $N docker run -d succeeded" test "$started" = "$N"
for i in $(seq "$N"); do [ -s "$TMP/ids/$i.err" ] && { echo "[$i]"; cat "$TMP/ids/$i.err"; }; done
IDS=()
for i in $(seq "$N"); do IDS+=("$(cat "$TMP/ids/$i")"); done

# --- registered, each with its limit ---
all_registered() { [ "$(registered_count)" = "$N" ]; }
wait_for "$N registered" "$WAIT_S" all_registered || true
check "$N containers registered" test "$(registered_count)" = "$N"
wrong=0
for i in $(seq "$N"); do
    [ "$(container_field "${IDS[$((i - 1))]}" limit)" = $(($(limit_of "$i") * MiB)) ] || {
        echo "container $i (${IDS[$((i - 1))]:0:12}): limit $(container_field "${IDS[$((i - 1))]}" limit)"
        wrong=$((wrong + 1)); }
done
check "each registered under its Docker id with its own limit" test "$wrong" = 0
s=$(snapshot); echo "before the gate: $s"
check "before the gate: device assigned/used are the sums" test "${s%% *}" = ok

# --- run: some must wait; the sums hold throughout; everyone finishes ---
# Everyone holds what it got until release: those that did not fit stay suspended until the
# snapshots have seen them (deadlines only bound a hang).
touch "$GATE/go"
saw_suspended=0 bad=0 snaps=0 released=0
deadline=$(($(date +%s) + 4 * WAIT_S))
while [ "$(date +%s)" -lt "$deadline" ]; do
    s=$(snapshot); snaps=$((snaps + 1))
    case $s in ok*) ;; *) bad=$((bad + 1)); echo "snapshot: $s" ;; esac
    case $s in *" suspended=0 "*) ;; *) saw_suspended=1 ;; esac
    case $s in *" registered=0 "*) break ;; esac
    if [ "$released" = 0 ] && { [ "$saw_suspended" = 1 ] || [ "$snaps" -ge 200 ]; }; then
        touch "$GATE/release"; released=1
    fi
done
echo "$snaps snapshots during the run"
check "during the run: every snapshot's device assigned/used equal the sums" test "$bad" = 0
check "the device was too small for all: some containers were suspended" test "$saw_suspended" = 1
failed=0
for id in "${IDS[@]}"; do
    rc=$(timeout "$WAIT_S" "$DOCKER" wait "$id" 2>/dev/null || echo timeout)
    [ "$rc" = 0 ] || { failed=$((failed + 1)); echo "${id:0:12}: exit $rc"; "$DOCKER" logs "$id" 2>&1 | tail -3; }
done
check "all $N containers exited 0 (nobody ran out of memory)" test "$failed" = 0

# --- rm: everything returns ---
"$DOCKER" rm "${IDS[@]}" >/dev/null
check "after docker rm: nothing registered" test "$(registered_count)" = 0
check "after docker rm: device assigned 0, used 0" bash -c \
    "'$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' devices --json | python3 -c 'import json,sys; d=json.load(sys.stdin)[0]; assert (d[\"assigned\"], d[\"used\"], d[\"containers\"]) == (0, 0, 0), d'"
finish
