#!/usr/bin/env bash
# check-stages.sh — `make check`: runs every stage (make test, asan, tsan, fuzz, package) even
# when an earlier one failed, so that one failing test does not hide what the sanitizers and the
# fuzzers would say; prints a table (stage, result, duration, the stage's ctest summary) and exits
# non-zero if any stage failed.
#
# Usage: scripts/check-stages.sh MAKE STAGE...   (the Makefile passes $(MAKE) and the stages)
#
# The last lines are for CI, which judges the run by its exit status and the closing lines:
#   failed tests: STAGE:[ TEST... ] ...            (only when a test failed)
#   check: N passed, M failed (STAGES THAT FAILED)
#   P% tests passed, F tests failed out of T      (ctest's wording, summed over the stages; a
#                                                   stage that failed before its tests ran counts
#                                                   as one failed test)
set -u
[ "$#" -ge 2 ] || { echo "usage: $0 MAKE STAGE..." >&2; exit 2; }
MAKE_CMD=$1
shift

LOGS=$(mktemp -d /tmp/convgpu-check.XXXXXX)
trap 'rm -rf "$LOGS"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

STAGES=() RESULTS=() SECS=() SUMMARIES=()
n_pass=0 n_fail=0 failed_names="" failed_list="" t_total=0 t_failed=0
for stage in "$@"; do
    echo "==== make $stage"
    t0=$(date +%s)
    # shellcheck disable=SC2086 # MAKE may carry options
    $MAKE_CMD "$stage" 2>&1 | tee "$LOGS/$stage.log"
    rc=${PIPESTATUS[0]}
    secs=$(($(date +%s) - t0))
    # ctest's closing line, e.g. "100% tests passed, 0 tests failed out of 66"
    summary=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$LOGS/$stage.log" | tail -n 1)
    if [ -n "$summary" ]; then
        t_total=$((t_total + $(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$summary")))
        t_failed=$((t_failed + $(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<<"$summary")))
    elif [ "$rc" -ne 0 ]; then
        summary="(no test summary: the stage failed before its tests ended)"
        t_total=$((t_total + 1)) t_failed=$((t_failed + 1))
    fi
    if [ "$rc" -eq 0 ]; then
        RESULTS+=(passed); n_pass=$((n_pass + 1))
    else
        RESULTS+=("FAILED ($rc)"); n_fail=$((n_fail + 1)); failed_names="$failed_names $stage"
    fi
    # The names of the tests that failed (ctest lists them after "The following tests
    # FAILED:"), so that the closing lines, all a CI log may keep, say which.
    failed_tests=$(sed -n '/^The following tests FAILED:/,/^[^[:space:]]/s/^[[:space:]]\+[0-9]\+ - \([^ ]*\).*/\1/p' \
        "$LOGS/$stage.log" | tr '\n' ' ')
    [ -n "$failed_tests" ] && failed_list="$failed_list $stage:[ ${failed_tests}]"
    STAGES+=("$stage") SECS+=("$secs") SUMMARIES+=("$summary")
    echo "==== make $stage: ${RESULTS[-1]} after ${secs} s"
done

echo
echo "==== make check: every stage"
printf '%-8s %-12s %9s  %s\n' stage result duration tests
for i in "${!STAGES[@]}"; do
    printf '%-8s %-12s %7d s  %s\n' "${STAGES[$i]}" "${RESULTS[$i]}" "${SECS[$i]}" "${SUMMARIES[$i]}"
done
[ -n "$failed_list" ] && echo "failed tests:$failed_list"
echo "check: $n_pass passed, $n_fail failed${failed_names:+ (failed:$failed_names)}"
if [ "$t_total" -gt 0 ]; then
    echo "$(( (t_total - t_failed) * 100 / t_total ))% tests passed, $t_failed tests failed out of $t_total"
fi
[ "$n_fail" -eq 0 ]
