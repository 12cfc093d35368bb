#!/usr/bin/env bash
# test_profile_bound.sh — one tenant's profile records are bounded (issue 42 item 4: distinct
# 250-character keys grew state.db until a small disk was full). Real runs of the tenant T
# (uid 1201, a member of the control group) on the emulated GPU, each under a distinct key
# (the command's name: a link to the sample), recorded when the run ends.
#   1. --profile-max-keys 4: after six keys T keeps the last four; a key run again is recent
#      again, so the next new key drops the least recently run one; another tenant's profile
#      (root's) is untouched; a restart keeps the bound.
#   2. --profile-max-bytes 16KiB with 250-character keys: T's records in state.db never take
#      more than 16 KiB by the documented measure (profile.h), the newest is kept, the oldest
#      went first; root's profile again untouched.
#   3. bad values stop the daemon before it starts.
. "$(dirname "$0")/lib.sh"
command -v groupadd >/dev/null || { echo "SKIP: groupadd missing"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 (the CLI) missing"; exit 77; }
CTL=cgt-prof-$$
groupadd "$CTL" || { echo "SKIP: cannot create groups"; exit 77; }
CTL_GID=$(getent group "$CTL" | cut -d: -f3)
cleanup_prof() { cleanup; groupdel "$CTL" 2>/dev/null; }
trap cleanup_prof EXIT
export CONVGPU_EMU_CONTEXT=2MiB
SAMPLE=$(readlink -f "$BUILD/bin/convgpu-sample")
CG=$(readlink -f "$BUILD/bin/convgpu")
mkdir -p "$TMP/bin"
chmod 0755 "$TMP/bin"

T() { setpriv --reuid=1201 --regid=1201 --groups="$CTL_GID" "$@"; }
# The emulated GPU's shared state is root's file; on a real GPU T would open the driver instead.
emu_open() { chmod 0755 "$RUNDIR/emu" && chmod 0666 "$RUNDIR/emu/state"; }
# job WHO KEY: one run recorded under KEY (the command's name), ended before this returns
job() {
    local pre=()
    [ "$1" = T ] && pre=(T)
    ln -sf "$SAMPLE" "$TMP/bin/$2"
    # Run as ./KEY from its directory: the command the daemon is given stays within 255 bytes.
    (cd "$TMP/bin" && "${pre[@]}" "$CG" --runtime-dir "$RUNDIR" run --quiet --gpu-memory 8MiB -- \
        "./$2" --size 4MiB --quiet) >"$TMP/job.out" 2>&1 || fail "run $2 as $1: $(cat "$TMP/job.out")"
}
# keys WHO: the profile keys WHO sees as its own, sorted, on one line
keys() {
    local pre=() q=
    [ "$1" = T ] && pre=(T)
    [ "$1" = root ] && q='?tenant=root'
    "${pre[@]}" curl -s --unix-socket "$RUNDIR/control.sock" "http://convgpu/v1/profiles$q" |
        grep -o '"key":"[^"]*"' | cut -d'"' -f4 | sort | tr '\n' ' '
}
long() { printf 'registry.example_%0230d:v%s' 0 "$1"; } # 250 characters (a file's name)

# ---- 3 first: bad values ------------------------------------------------------------------------
for bad in "--profile-max-keys 0" "--profile-max-keys 100001" "--profile-max-keys lots" \
    "--profile-max-bytes 1KiB" "--profile-max-bytes lots"; do
    # shellcheck disable=SC2086
    out=$("$BUILD/bin/convgpud" --runtime-dir "$TMP/never" --foreground $bad 2>&1) && rc=0 || rc=$?
    check "convgpud $bad: refused (exit $rc: $out)" test "$rc" = 2 -a ! -e "$TMP/never"
done

# ---- 1. a bound on the count --------------------------------------------------------------------
start_daemon --emulate 1GiB --control-group "$CTL" --profile-max-keys 4
emu_open
job root rootjob
for i in 1 2 3 4 5 6; do job T "job-$i"; done
check "T keeps its last four keys ($(keys T))" test "$(keys T)" = "job-3 job-4 job-5 job-6 "
check "root's profile is untouched ($(keys root))" test "$(keys root)" = "rootjob "
check "the log says which went" grep -q "profile .*/job-1 dropped" "$DAEMON_LOG"
job T job-3
job T job-7
check "a key run again stays; the least recently run goes ($(keys T))" \
    test "$(keys T)" = "job-3 job-5 job-6 job-7 "
stop_daemon_hard
start_daemon --emulate 1GiB --control-group "$CTL" --profile-max-keys 4
job T job-8
check "after a restart, still four ($(keys T))" test "$(keys T)" = "job-3 job-6 job-7 job-8 "
stop_daemon_hard

# ---- 2. a bound on the bytes ----------------------------------------------------------------------
start_daemon --emulate 1GiB --control-group "$CTL" --profile-max-bytes 16KiB
TENANT=$(curl -s --unix-socket "$RUNDIR/control.sock" http://convgpu/v1/profiles |
    grep -o '"tenant":"[^"]*","key":"job-8"' | cut -d'"' -f4)
check "T's tenant is named ($TENANT)" test -n "$TENANT"
# profile.h's measure: 64 bytes a row plus the tenant's and the key's text, a profile's row and
# each of its runs'.
bytes() {
    sqlite3 "$RUNDIR/state.db" "SELECT COALESCE(SUM((1 + (SELECT COUNT(*) FROM profile_run r
        WHERE r.tenant = p.tenant AND r.key = p.key)) * (length(CAST(p.tenant AS BLOB))
        + length(CAST(p.key AS BLOB)) + 64)), 0) FROM profile p WHERE p.tenant = '$TENANT'"
}
for i in $(seq 1 30); do job T "$(long "$i")"; done
b=$(bytes)
check "T's records take at most 16 KiB ($b bytes)" test "$b" -le 16384
check "... and nearly all of it (more than 15 KiB: $b)" test "$b" -gt 15360
check "the newest key is kept" grep -q "$(long 30)" <<<"$(keys T)"
check "the oldest went first" bash -c "! grep -q '$(long 1) ' <<<'$(keys T)'"
check "root's profile is untouched" test "$(keys root)" = "rootjob "
finish
