#!/bin/sh
# test_ab.sh BENCH_AB — bench_ab's figures from a raw file (--replay) against known answers, with
# --base choosing the command compared against, and its refusals of bad input. The figures are
# what the benchmarks' targets are judged by, so the arithmetic is tested, not only run.
set -u
AB=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() { # check WHAT COMMAND...
    what=$1; shift
    if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fails=$((fails + 1)); fi
}
field() { # field CMD KEY < report
    awk -v c="cmd=$1" -v k="$2" '$1 == c { for (i = 2; i <= NF; i++) if (index($i, k "=") == 1) print substr($i, length(k) + 2) }'
}
is() { [ "$1" = "$2" ] || { echo "     got '$1', want '$2'"; return 1; }; }

# Five repetitions of three commands. Command 2: median time 40; against command 0, paired
# ratios 2, 2, 2, 1.5, 3 (median 2) and paired differences 10, 20, 30, 5, 60 (median 20).
printf '%s\n' '0 10 11 20' '1 20 19 40' '2 30 33 60' '3 10 12 15' '4 30 25 90' >"$T/raw"
"$AB" --replay "$T/raw" --labels a,b,c >"$T/base0" 2>&1
check "replay: medians" is "$(field 0 med_ms <"$T/base0") $(field 2 med_ms <"$T/base0")" "20.000 40.000"
check "replay: paired ratio against the first" is "$(field 2 pratio <"$T/base0")" "2.0000"
check "replay: paired difference against the first" is "$(field 2 diff_med_ms <"$T/base0")" "20.000"
check "replay: the base has no paired figures" is "$(field 0 pratio <"$T/base0")" ""
check "replay: labels" is "$(awk '{ print $2 }' "$T/base0" | tr '\n' ' ')" "label=a label=b label=c "
# Against command 1: command 2's ratios 20/11, 40/19, 60/33, 15/12, 90/25 (median 60/33).
"$AB" --replay "$T/raw" --base 1 >"$T/base1" 2>&1
check "--base 1: paired ratio against command 1" is "$(field 2 pratio <"$T/base1")" "1.8182"
check "--base 1: command 0 is compared too" is "$(field 0 diff_med_ms <"$T/base1")" "-1.000"
check "--base 1: command 1 is the base" is "$(field 1 pratio <"$T/base1")" ""

# Bad input: a clear refusal, exit 2 (usage) or 1 (the file), and no figures.
refused() { # refused WANT_RC ARGS...
    want=$1; shift
    "$AB" "$@" >"$T/out" 2>"$T/err"; rc=$?
    [ "$rc" = "$want" ] && [ -s "$T/err" ] && ! grep -q '^cmd=' "$T/out"
}
printf '%s\n' '0 1 2' '1 1' >"$T/ragged"
printf '%s\n' '0 1 x' >"$T/word"
printf '%s\n' '0 1 -2' >"$T/negative"
: >"$T/empty"
check "refused: --base past the last command" refused 2 --replay "$T/raw" --base 3
check "refused: --base not a number" refused 2 --replay "$T/raw" --base one
check "refused: --reps 0" refused 2 --reps 0 -- true
check "refused: a replay with commands" refused 2 --replay "$T/raw" -- true
check "refused: a replay that would write a raw file" refused 2 --replay "$T/raw" --raw "$T/x"
check "refused: rows of different lengths" refused 1 --replay "$T/ragged"
check "refused: a time that is not a number" refused 1 --replay "$T/word"
check "refused: a negative time" refused 1 --replay "$T/negative"
check "refused: an empty file" refused 1 --replay "$T/empty"
check "refused: a missing file" refused 1 --replay "$T/missing"
check "refused: no commands" refused 2 --reps 3 --

# A real run writes the raw file its replay reads back to the same figures.
"$AB" --reps 3 --warmup 0 --raw "$T/run.raw" --labels x,y -- true --- true >"$T/run" 2>&1
"$AB" --replay "$T/run.raw" --labels x,y >"$T/replayed" 2>&1
# (The raw file keeps microseconds, so the spreads agree exactly; a ratio may differ in its last digit.)
spreads() { awk '{ print $1, $2, $3, $4, $5, $6, $7, $8 }' "$1"; }
check "a run's raw file replays to its spreads" is "$(spreads "$T/replayed")" "$(spreads "$T/run")"
check "the raw file has a line per repetition" is "$(wc -l <"$T/run.raw" | tr -d ' ')" 3

echo "$fails failed"
[ "$fails" -eq 0 ]
