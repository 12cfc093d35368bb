# section.sh — sourced by the benchmark scripts: replaces one generated section of a Markdown
# file (the lines between two marker comments) with a new text, keeping everything around it.
#   write_section FILE BEGIN END GENERATED [HEADING]
# A file without the markers gets them appended (after HEADING, when given); a missing file is
# created with a title.
write_section() {
    local out=$1 begin=$2 end=$3 gen=$4 heading=${5:-}
    [ -f "$out" ] || printf '# Benchmarks\n\n' >"$out"
    if ! grep -qF "$begin" "$out"; then
        if [ -n "$heading" ]; then printf '\n%s\n' "$heading" >>"$out"; fi
        printf '\n%s\n%s\n' "$begin" "$end" >>"$out"
    fi
    local tmp
    tmp=$(mktemp "${out}.XXXXXX")
    awk -v b="$begin" -v e="$end" -v gen="$gen" '
        $0 == b { print; while ((getline l < gen) > 0) print l; skip = 1; next }
        $0 == e { skip = 0 }
        !skip { print }' "$out" >"$tmp"
    cat "$tmp" >"$out"
    rm -f "$tmp"
}

# bench_destination RECORD SRC: where a benchmark writes its section. A run writes only where it
# was asked to: BENCH_OUT=FILE, or docs/BENCHMARKS.md with --record (RECORD=1; `make bench`).
# Otherwise nothing is written (prints nothing): a smoke run must never replace recorded figures.
bench_destination() {
    if [ -n "${BENCH_OUT:-}" ]; then printf '%s\n' "$BENCH_OUT"
    elif [ "$1" = 1 ]; then printf '%s\n' "$2/docs/BENCHMARKS.md"
    fi
}

# write_or_print FILE BEGIN END GENERATED [HEADING]: write_section where FILE is given; with no
# FILE the section goes to stdout and the log says how to record it.
write_or_print() {
    if [ -n "$1" ]; then
        write_section "$@"
        echo "[bench] results written to $1" >&2
    else
        cat "$4"
        echo "[bench] results printed, not written (--record writes docs/BENCHMARKS.md, BENCH_OUT=FILE another file)" >&2
    fi
}
