#!/usr/bin/env bash
# test_dashboard.sh — package.dashboard: every metric the Grafana dashboard
# (packaging/grafana/convgpu-dashboard.json) queries is one a real daemon serves at /metrics.
# A daemon on the emulated GPU with one container (so the per-container families have samples)
# and one workload (so requests were timed); then the dashboard's names are looked up among the
# sample names of the scrape. A renamed metric, or a typo in a panel, fails here.
. "$(dirname "$0")/../e2e/lib.sh"
SRC=${CONVGPU_SOURCE_DIR:?CONVGPU_SOURCE_DIR must point at the source tree}
DASH=$SRC/packaging/grafana/convgpu-dashboard.json

start_daemon
cg create --gpu-memory 256MiB --gpu-compute 30 --compute-mode hard --name dash >/dev/null \
    && pass "a container with a compute share" || fail "create failed"
cg run --quiet --gpu-memory 128MiB -- "$BUILD/bin/convgpu-sample" --size 32MiB --quiet \
    && pass "a workload ran (its requests are timed)" || fail "workload failed"

read -r status _ < <(api GET /metrics)
check "GET /metrics answers 200" test "$status" = 200
cp "$TMP/api.out" "$TMP/metrics.txt"
check "the scrape is valid exposition" python3 "$SRC/tests/e2e/prom_check.py" <"$TMP/metrics.txt"

# Names in the panels' queries: every convgpu_ identifier of every target's expr.
python3 - "$DASH" >"$TMP/queried" <<'PY' || fail "the dashboard is not valid JSON with panels"
import json, re, sys
d = json.load(open(sys.argv[1]))
names = set()
def walk(panels):
    for p in panels:
        walk(p.get("panels", []))
        for t in p.get("targets", []):
            names.update(re.findall(r"\bconvgpu_[a-z0-9_]+", t.get("expr", "")))
walk(d["panels"])
for v in d.get("templating", {}).get("list", []):
    q = v.get("query")
    text = q.get("query", "") if isinstance(q, dict) else q or ""
    names.update(re.findall(r"\bconvgpu_[a-z0-9_]+", text))
if not names:
    sys.exit("no queries")
print("\n".join(sorted(names)))
PY
sed -n 's/^\(convgpu_[a-z0-9_]*\)[{ ].*/\1/p' "$TMP/metrics.txt" | sort -u >"$TMP/served"
check "the dashboard queries metrics ($(wc -l <"$TMP/queried") names)" test -s "$TMP/queried"
missing=$(comm -23 "$TMP/queried" "$TMP/served")
if [ -z "$missing" ]; then
    pass "every metric the dashboard queries is served"
else
    fail "the dashboard queries metrics /metrics does not serve: $(echo $missing)"
fi
unused=$(comm -13 "$TMP/queried" "$TMP/served" | grep -v '_bucket$' || true)
[ -z "$unused" ] || echo "note: served but on no panel: $(echo $unused)"
finish
