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
