#!/usr/bin/env bash
# test_profile.sh — profiles (issue 21 item 3) with a real daemon and real processes: a container
# runs, ends, and its profile appears with the exact peak it reached (the sample holds a known
# allocation until the test has seen it); `--limit profile` takes the peak plus the margin (and
# the event log says so); a daemon killed while a container holds its peak keeps it; a daemon
# with --profile-limits gives every run without a limit its profile; restarts keep the profiles;
# a profile is its last 16 runs (a big run is forgotten after 16 small ones); `profile rm`
# forgets one. Bad input — an unknown key in rm, --profile-limits 0% / abc / 300%,
# --limit something, malformed API fields — is refused with a clear error and changes nothing.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=6MiB
start_daemon --emulate 2GiB
SAMPLE=$BUILD/bin/convgpu-sample
ME=$(id -un)
MiB=$((1 << 20))
PEAK=$((256 * MiB + 6 * MiB)) # the sample's allocation and its process's context charge

# profile_field KEY FIELD: a field of the caller's profile KEY ("" when there is none).
profile_field() {
    cg profile --json | python3 -c 'import json,sys
for p in json.load(sys.stdin):
    if p["key"] == sys.argv[1]: print(p[sys.argv[2]])' "$1" "$2"
}
used_is() { [ "$(container_field "$1" used 2>/dev/null)" = "$2" ]; }

# held NAME ARGS...: `convgpu run --name NAME ARGS -- sample 256MiB` holding its memory until the
# test touches $TMP/release.NAME; the container is left once the test has seen its peak.
held() {
    local name=$1; shift
    "$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --name "$name" "$@" -- \
        "$SAMPLE" --size 256MiB --touch 1MiB --hold-until "$TMP/release.$name" --quiet >"$TMP/$name.out" 2>&1 &
    RUNNER=$!
    wait_for "$name reaches its peak, or its runner ends" "$WAIT_S" \
        bash -c "[ \"\$('$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' inspect $name 2>/dev/null | sed -n 's/^  \"used\": \([0-9]*\),/\1/p')\" = $PEAK ] || ! kill -0 $RUNNER"
    used_is "$name" "$PEAK" || fail "$name never used $PEAK bytes: $(cat "$TMP/$name.out")"
}
release() { # release NAME: the sample frees and exits, its runner removes the container
    touch "$TMP/release.$1"
    wait "$RUNNER" && pass "$1 ran to its end" || fail "$1 failed: $(cat "$TMP/$1.out")"
}

check "no profile before any run" test "$(cg profile --json)" = "[]"

# --- a run is recorded with its peak ---
held first --gpu-memory 512MiB
release first
check "the run is recorded under the user and the command" \
    test "$(profile_field convgpu-sample tenant)" = "$ME"
check "its peak is exactly what it reached ($PEAK)" test "$(profile_field convgpu-sample peak)" = "$PEAK"
check "one run" test "$(profile_field convgpu-sample runs) $(profile_field convgpu-sample window)" = "1 1"
check "a duration" python3 -c "import sys; sys.exit(not 0 < $(profile_field convgpu-sample duration_s) < 600)"
check "utilisation measured on the emulated GPU, 0..1" \
    python3 -c "import sys; sys.exit(not ('$(profile_field convgpu-sample utilization_known)' == 'True' and 0 <= $(profile_field convgpu-sample utilization) <= 1))"
check "the table lists it" bash -c "'$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' profile | grep -q '^$ME *convgpu-sample *262MiB'"
out=$(api GET /v1/profiles)
check "GET /v1/profiles answers it" grep -q "\"key\":\"convgpu-sample\",\"peak\":$PEAK" <<<"$out"
# A container no process used teaches nothing.
cg run --quiet --gpu-memory 64MiB -- true
check "a run that never used the GPU is not recorded" test -z "$(profile_field true peak)"

# --- --limit profile: the peak plus the default margin (20%), rounded up to MiB ---
WANT=$(( (PEAK + PEAK / 100 * 20 + PEAK % 100 * 20 / 100 + MiB - 1) / MiB * MiB ))
seq0=$(api GET '/v1/events?since=0' | python3 -c 'import json,sys; print(json.loads(sys.stdin.read().split(" ",1)[1])["next"])')
held second --limit profile
check "--limit profile takes peak + 20% ($WANT)" test "$(container_field second limit)" = "$WANT"
check "the event log says the limit came from the profile" \
    bash -c "'$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' events --once --json --since $seq0 | grep -q '\"type\":\"profile-limit\".*\"bytes\":$WANT'"
check "the runner says so" grep -q "from profile: peak 262MiB + 20%" "$TMP/second.out"
release second
check "two runs" test "$(profile_field convgpu-sample runs)" = 2

# --- the peak survives a daemon killed while the container holds it ---
held third --gpu-memory 512MiB
stop_daemon_hard
start_daemon --emulate 2GiB
release third
check "a peak reached before a restart is recorded after it" test "$(profile_field convgpu-sample peak) $(profile_field convgpu-sample runs)" = "$PEAK 3"

# --- no profile: --limit profile falls back to --gpu-memory, or says what to give ---
set +e
cg run --quiet --limit profile -- sh -c 'exit 0' 2>"$TMP/noprof.err"; rc=$?
set -e
check "--limit profile with no profile and no --gpu-memory is refused (125)" test "$rc" = 125
check "... saying what to give" grep -q "no profile for $ME/sh yet: give gpu_memory" "$TMP/noprof.err"
cg run --quiet --limit profile --gpu-memory 64MiB -- sh -c 'exit 0'
pass "--limit profile with no profile takes --gpu-memory"

# --- bad input: nothing changed ---
before=$(cg profile --json)
set +e
cg profile rm no-such-job 2>"$TMP/rm.err"; rc=$?
set -e
check "profile rm of an unknown key exits 3" test "$rc" = 3
check "... naming it" grep -q "no profile named no-such-job" "$TMP/rm.err"
for m in 0% abc 300% 101% 20.5% "" -5%; do
    set +e
    "$BUILD/bin/convgpud" --runtime-dir "$TMP/bad" --emulate 1GiB --foreground --profile-limits "$m" \
        >"$TMP/bad.out" 2>&1; rc=$?
    set -e
    if [ "$rc" = 2 ] && grep -q "profile-limits takes a margin from 1% to 100%" "$TMP/bad.out" && [ ! -e "$TMP/bad" ]; then
        pass "convgpud --profile-limits '$m' refused, nothing created"
    else fail "convgpud --profile-limits '$m': rc $rc, $(cat "$TMP/bad.out")"; fi
done
set +e
cg run --limit lots -- true 2>"$TMP/limit.err"; rc=$?
set -e
check "run --limit takes only 'profile'" bash -c "[ $rc = 2 ] && grep -q \"bad --limit 'lots': one of profile\" '$TMP/limit.err'"
for body in '{"gpu_memory":"64MiB","profile_limit":"yes"}' '{"gpu_memory":"64MiB","image":"a b"}' \
            '{"gpu_memory":"64MiB","command":""}' '{"gpu_memory":"64MiB","image":7}' '{}'; do
    out=$(api POST /v1/containers "$body")
    if [ "${out%% *}" = 400 ] && grep -q '"error"' <<<"$out"; then pass "create refused (400): $body"
    else fail "create $body answered: $out"; fi
done
check "refused requests changed no profile, made no container" \
    test "$(cg profile --json) $(cg ps --json)" = "$before []"

# --- a daemon with --profile-limits: a run without a limit takes its profile ---
stop_daemon_hard
start_daemon --emulate 2GiB --profile-limits 50%
check "profiles survive a restart" test "$(cg profile --json)" = "$before"
WANT=$(( (PEAK + PEAK / 100 * 50 + PEAK % 100 * 50 / 100 + MiB - 1) / MiB * MiB ))
held fourth
check "no --gpu-memory on --profile-limits 50%: peak + 50% ($WANT)" test "$(container_field fourth limit)" = "$WANT"
release fourth
set +e
cg run --quiet -- sh -c 'exit 0' 2>"$TMP/nolimit.err"; rc=$?
set -e
check "no limit and no profile is refused, saying what to give" \
    bash -c "[ $rc = 125 ] && grep -q 'no profile for $ME/sh yet' '$TMP/nolimit.err'"

# --- the window: the last 16 runs. A big first run is forgotten after 16 small ones ---
ln -s "$SAMPLE" "$TMP/windowjob"
"$BUILD/bin/convgpu" --runtime-dir "$RUNDIR" run --name w0 --gpu-memory 256MiB -- "$TMP/windowjob" \
    --size 128MiB --touch 1MiB --hold-until "$TMP/release.w0" --quiet >"$TMP/w0.out" 2>&1 &
RUNNER=$!
BIG=$((134 * MiB))
wait_for "w0 reaches its peak, or its runner ends" "$WAIT_S" \
    bash -c "[ \"\$('$BUILD/bin/convgpu' --runtime-dir '$RUNDIR' inspect w0 2>/dev/null | sed -n 's/^  \"used\": \([0-9]*\),/\1/p')\" = $BIG ] || ! kill -0 $RUNNER"
release w0
check "the big run's peak" test "$(profile_field windowjob peak)" = "$BIG"
for i in $(seq 16); do cg run --quiet --gpu-memory 64MiB -- "$TMP/windowjob" --size 2MiB --quiet; done
check "17 runs, 16 in the window" test "$(profile_field windowjob runs) $(profile_field windowjob window)" = "17 16"
check "the big run has left the window: the peak is a small run's" \
    test "$(profile_field windowjob peak)" -le $((8 * MiB))
check "state.db keeps 16 rows of it" test "$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM profile_run WHERE key=?", ("windowjob",)).fetchone()[0])' "$RUNDIR/state.db")" = 16

# --- profile rm ---
check "profile rm forgets it" test "$(cg profile rm convgpu-sample)" = convgpu-sample
check "gone from the list, the other kept" test "$(cg profile --json | python3 -c 'import json,sys; print([p["key"] for p in json.load(sys.stdin)])')" = "['windowjob']"
finish
