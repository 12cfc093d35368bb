#!/usr/bin/env bash
# test_interfere_profiles.sh — `convgpu interfere` results stored as profiles (issue 22 item 3),
# on the emulated GPU: the runs alone become runs of each workload's profile key and the pairs
# do not ("profile": false); --save stores the slowdown matrix the CSV printed (PUT
# /v1/interference), `convgpu profile interference` shows it; a second tenant's save does not
# touch the first's; bad keys and bad bodies are refused, naming the field, and change nothing;
# a restarted daemon keeps the rows; a state.db of the schema before the table opens and gets it.
. "$(dirname "$0")/lib.sh"
export CONVGPU_EMU_CONTEXT=6MiB
# A second tenant is a second user (uid 65534, its primary group nogroup owns the control socket).
OTHER_OK=
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && getent group nogroup >/dev/null; then
    OTHER_OK=1
    chmod 0755 "$TMP"
fi
DAEMON_ARGS="--emulate 2GiB ${OTHER_OK:+--control-group nogroup}"
# shellcheck disable=SC2086
start_daemon $DAEMON_ARGS
BURN=$BUILD/bin/convgpu-burn
SAMPLE=$BUILD/bin/convgpu-sample
ME=$(id -un)
W1="$BURN --kernels 20 --kernel-us 20000 --alloc 8388608"
W2="$SAMPLE --size 16MiB --quiet"

code() { echo "${1%% *}"; }
body() { echo "${1#* }"; }
matrix() { api GET "/v1/interference${1:-}" | cut -d' ' -f2-; } # the rows as the API lists them
state() { echo "$(cg ps --json) $(cg profile --json) $(matrix)"; }

# --- bad keys: exit 2, nothing created, nothing recorded ---
bad() { # bad DESCRIPTION PATTERN ARGS...
    local what=$1 pat=$2; shift 2
    local before; before=$(state)
    set +e; cg interfere --gpu-memory 64MiB --runs 1 "$@" >/dev/null 2>"$TMP/err"; local rc=$?; set -e
    check "$what: exit 2 ($rc)" test "$rc" = 2
    check "$what: the message says why" grep -q -- "$pat" "$TMP/err"
    check "$what: nothing created or recorded" test "$(state)" = "$before"
}
bad "a key with a space" "workload 1: bad profile key 'a b'" --key 'a b' --key c -- "$W2" true
bad "a key with a quote" "workload 2: bad profile key" --key a --key 'c"' -- "$W2" true
bad "one key for two workloads" "1 --key for 2 workloads" --key a -- "$W2" true
bad "the same key twice" "workloads 1 and 2 have the same profile key 'a'" --key a --key a -- "$W2" true
bad "two commands with one basename" "same profile key 'convgpu-sample'" -- "$W2" "$SAMPLE --size 8MiB"
bad "a key longer than 255" "bad profile key" --key "$(printf 'k%.0s' $(seq 256))" -- true

# --- measured and saved: the runs alone in the profiles, the pairs nowhere ---
check "no profile and no matrix before" test "$(cg profile --json) $(matrix)" = "[] []"
set +e
cg interfere --quiet --runs 1 --gpu-memory 128MiB --csv "$TMP/m.csv" --save --key a --key b \
    --log "$TMP/workloads.log" -- "$W1" "$W2" >"$TMP/table" 2>"$TMP/err"; rc=$?
set -e
cat "$TMP/table" "$TMP/err"
check "interfere --save measures and saves (exit $rc)" test "$rc" = 0
check "the table names the keys" bash -c "grep -q 'W1 .* a: .*convgpu-burn' '$TMP/table' && grep -q 'W2 .* b: .*convgpu-sample' '$TMP/table'"
check "it says where the matrix went" grep -q "saved 4 slowdowns as tenant $ME's" "$TMP/table"
check "no container is left" test "$(cg ps --json)" = "[]"
profiles() { cg profile --json | python3 -c 'import json,sys
print(" ".join("%s:%s:%d" % (p["tenant"], p["key"], p["runs"]) for p in json.load(sys.stdin)))'; }
# Each workload ran alone once and in three pairs (twice as the foreground or background of the
# other, once beside itself): a pair recorded as a profile run would make runs 3 or more.
check "profiles a and b hold the runs alone only (1 each: $(profiles))" test "$(profiles)" = "$ME:a:1 $ME:b:1"

same_as_csv() { # same_as_csv TENANT ROWS_FILE: the API's rows are the CSV's pairs by key, with
    # the same slowdowns and runs
    python3 - "$TMP/m.csv" "$1" "$2" <<'PY'
import csv, json, sys
want = {(r["foreground_key"], r["background_key"]): (float(r["slowdown"]), int(r["runs"]))
        for r in csv.DictReader(open(sys.argv[1]))}
got = {(r["foreground"], r["background"]): (r["slowdown"], r["runs"], r["tenant"])
       for r in json.load(open(sys.argv[3]))}
ok = len(want) == 4 and set(want) == set(got) and all(
    abs(got[k][0] - want[k][0]) < 1e-6 and got[k][1] == want[k][1] and got[k][2] == sys.argv[2]
    for k in want)
print(want, got, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}
# A new container of a profiled job carries what placement needs (load-balance, standalone):
# its profile's utilisation as a whole percent, and one application id per key.
hint() { api POST /v1/containers "{\"name\":\"$1\",\"image\":\"$2\",\"gpu_memory\":\"64MiB\"}" |
    cut -d' ' -f2- | python3 -c 'import json,sys; h=json.load(sys.stdin)["placement_hint"]; print(h["utilization_pct"], h["app"])'; }
want_a=$(api GET /v1/profiles | cut -d' ' -f2- | python3 -c '
import json,sys
p=[p for p in json.load(sys.stdin) if p["key"]=="a"][0]
print(min(100, max(1, int(p["utilization"] * 100 + 0.5))) if p["utilization_known"] and p["utilization"] > 0 else 0)')
h1=$(hint h1 a); h2=$(hint h2 a); h3=$(hint h3 b)
check "a container of job a gets its profile's utilisation ($want_a%): $h1" \
    test "${h1%% *}" = "$want_a"
check "one application id per key: a twice the same, b another, none zero" \
    eval '[ "${h1#* }" = "${h2#* }" ] && [ "${h1#* }" != "${h3#* }" ] && [ "${h1#* }" != 0000000000000000 ]'
cg rm h1 >/dev/null; cg rm h2 >/dev/null; cg rm h3 >/dev/null
matrix >"$TMP/rows.json"
check "GET /v1/interference is the matrix the CSV printed" same_as_csv "$ME" "$TMP/rows.json"
check "the CSV ends each pair with its keys" grep -q ',"b","a"$' "$TMP/m.csv"
check "convgpu profile interference --json is the API's answer" \
    test "$(cg profile interference --json | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)))')" = \
         "$(matrix | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)))')"
check "convgpu profile interference lists the four pairs" \
    test "$(cg profile interference | grep -c "^$ME  *[ab]  *[ab]  *[0-9.]*  *1  ")" = 4
mine=$(matrix)

# --- another tenant: its own rows, never the first's ---
if [ -n "$OTHER_OK" ]; then
    other() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
    oapi() { # oapi METHOD PATH [BODY], as uid 65534
        local out
        out=$(other curl -s -w ' %{http_code}' --unix-socket "$RUNDIR/control.sock" \
            -X "$1" ${3:+-H 'Content-Type: application/json' --data "$3"} "http://convgpu$2") || true
        echo "${out##* } ${out% *}"
    }
    OTHER=$(oapi PUT /v1/interference '{"rows":[{"foreground":"a","background":"b","slowdown":9.5,"runs":2}]}')
    check "another tenant saves its own row ($OTHER)" test "$(code "$OTHER")" = 200
    oten=$(body "$OTHER" | json_get tenant || true)
    check "... as its own tenant ($oten), not $ME" bash -c "[ -n '$oten' ] && [ '$oten' != '$ME' ]"
    check "the first tenant's rows are unchanged" test "$(matrix "?tenant=$ME")" = "$mine"
    check "the other tenant sees only its row" \
        test "$(body "$(oapi GET /v1/interference)" | python3 -c 'import json,sys; print([(r["tenant"], r["foreground"], r["background"], r["slowdown"], r["runs"]) for r in json.load(sys.stdin)])')" = \
             "[('$oten', 'a', 'b', 9.5, 2)]"
    check "it may not write another tenant's rows (403)" \
        test "$(code "$(oapi PUT "/v1/interference?tenant=$ME" '{"rows":[{"foreground":"a","background":"b","slowdown":9,"runs":1}]}')")" = 403
    check "nor read them (403)" test "$(code "$(oapi GET "/v1/interference?tenant=$ME")")" = 403
    check "nor clear them: its DELETE removes its own row only" \
        test "$(body "$(oapi DELETE /v1/interference)" | json_get removed)" = 1
    check "the first tenant's rows survive the other's DELETE" test "$(matrix "?tenant=$ME")" = "$mine"
    oapi PUT /v1/interference '{"rows":[{"foreground":"a","background":"b","slowdown":9.5,"runs":2}]}' >/dev/null
    check "an operator sees both tenants" test "$(matrix | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 5
else
    echo "note: not root, or no setpriv or nogroup: the second tenant's part is left out"
    oten=
fi
all=$(matrix)

# --- bad bodies: 400 naming the field, nothing stored ---
refused() { # refused DESCRIPTION FIELD BODY [PATH]
    local out; out=$(api PUT "${4:-/v1/interference}" "$3")
    check "$1: 400 ($(code "$out"))" test "$(code "$out")" = 400
    check "$1: the message names $2" grep -qF -- "$2" <<<"$(body "$out")"
    check "$1: nothing changed" test "$(matrix)" = "$all"
}
row() { echo "{\"foreground\":${1:-\"a\"},\"background\":${2:-\"b\"},\"slowdown\":${3:-2},\"runs\":${4:-1}}"; }
refused "not JSON" "JSON object" '{"rows":'
refused "no rows" "rows must be an array" '{}'
refused "empty rows" "rows must be an array of 1 to 256" '{"rows":[]}'
refused "257 rows" "rows must be an array of 1 to 256" \
    "{\"rows\":[$(for i in $(seq 257); do printf '%s,' "$(row "\"f$i\"")"; done | sed 's/,$//')]}"
refused "an unknown top field" "unknown field 'tenant'" "{\"rows\":[$(row)],\"tenant\":\"x\"}"
refused "an unknown row field" "rows[0]: unknown field 'x'" '{"rows":[{"foreground":"a","background":"b","slowdown":2,"runs":1,"x":1}]}'
refused "a row that is no object" "rows[0] must be an object" '{"rows":[1]}'
refused "a key with a space" "rows[0].foreground must be a profile key" "{\"rows\":[$(row '"a b"')]}"
refused "a missing background" "rows[0].background must be a profile key" '{"rows":[{"foreground":"a","slowdown":2,"runs":1}]}'
refused "a slowdown of 0" "rows[0].slowdown must be a number above 0 and below 1000" "{\"rows\":[$(row '"a"' '"b"' 0)]}"
refused "a negative slowdown" "rows[0].slowdown" "{\"rows\":[$(row '"a"' '"b"' -1.5)]}"
refused "a slowdown of 1000" "rows[0].slowdown" "{\"rows\":[$(row '"a"' '"b"' 1000)]}"
refused "a slowdown as a string" "rows[0].slowdown" "{\"rows\":[$(row '"a"' '"b"' '"2"')]}"
refused "runs 0" "rows[0].runs must be a whole number from 1 to 1000" "{\"rows\":[$(row '"a"' '"b"' 2 0)]}"
refused "runs 1.5" "rows[0].runs" "{\"rows\":[$(row '"a"' '"b"' 2 1.5)]}"
refused "runs 1001" "rows[0].runs" "{\"rows\":[$(row '"a"' '"b"' 2 1001)]}"
refused "a pair twice" "rows[1] repeats the pair of rows[0]" "{\"rows\":[$(row),$(row '"a"' '"b"' 3)]}"
refused "a good row, then a bad one" "rows[1].slowdown" "{\"rows\":[$(row '"a"' '"b"' 7),$(row '"b"' '"a"' 0)]}"
refused "a bad tenant name" "tenant must be" "{\"rows\":[$(row)]}" "/v1/interference?tenant=..x"
out=$(api POST /v1/interference "{\"rows\":[$(row)]}")
check "POST is not a method of /v1/interference (405)" test "$(code "$out")" = 405
check "... nothing changed" test "$(matrix)" = "$all"
out=$(api POST /v1/containers '{"gpu_memory":"64MiB","image":"x","profile":"no"}')
check "a create with \"profile\": \"no\": 400 naming the field" \
    bash -c "[ '$(code "$out")' = 400 ] && grep -q 'profile must be true or false' <<<'$(body "$out")'"
check "... no container" test "$(cg ps --json)" = "[]"

# --- a restarted daemon keeps the rows ---
stop_daemon_hard
start_daemon $DAEMON_ARGS
check "after a restart the rows are the same" test "$(matrix)" = "$all"

# --- a state.db of the schema before the table (version 1: profiles, no interference) ---
stop_daemon_hard
python3 - "$RUNDIR/state.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("DROP TABLE interference; PRAGMA user_version=1;")
db.commit()
PY
start_daemon $DAEMON_ARGS
check "an older state.db opens and is upgraded" grep -q "upgraded to schema version 2" "$DAEMON_LOG"
check "... its profiles kept" test "$(profiles)" = "$ME:a:1 $ME:b:1"
check "... and an empty matrix" test "$(matrix)" = "[]"
out=$(api PUT /v1/interference "{\"rows\":[$(row '"a"' '"b"' 1.25 3)]}")
check "... which takes rows ($out)" test "$(code "$out") $(matrix | python3 -c 'import json,sys; print([(r["foreground"], r["background"], r["slowdown"], r["runs"]) for r in json.load(sys.stdin)])')" = "200 [('a', 'b', 1.25, 3)]"

# --- clearing ---
check "convgpu profile interference rm clears the caller's rows" \
    test "$(cg profile interference rm --tenant "$ME")" = "1 removed"
check "... and they are gone" test "$(matrix)" = "[]"
set +e; cg profile interference --bogus >/dev/null 2>"$TMP/err"; rc=$?; set -e
check "profile interference with a bad argument: exit 2 ($rc)" test "$rc" = 2
finish
