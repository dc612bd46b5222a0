#!/usr/bin/env bash
# Times the compile of 50 tools written with our #[tool] against the same 50 tools written with
# rmcp's #[tool] + schemars, and prints the ratios (ours / rmcp; below 1 means we are faster).
#
#   clean        : `cargo clean`, then `cargo build` (every dependency included)
#   crate        : `cargo clean -p <bench crate>`, then `cargo build` (dependencies already built)
#   incremental  : edit one string literal in one tool body, then `cargo build` (median of RUNS)
#
# Debug profile, each crate with its own target directory. Usage: ./run.sh [RUNS] (default 3).
set -euo pipefail
cd "$(dirname "$0")"
RUNS="${1:-3}"
python3 generate.py

now_ms() { date +%s%3N; }

# build DIR: prints the wall time of `cargo build` in milliseconds.
build() {
    local dir="$1" start end
    start=$(now_ms)
    (cd "$dir" && CARGO_TARGET_DIR="$PWD/target" cargo build --quiet 2>"$PWD/build.log" >/dev/null) || {
        echo "build of $dir failed:" >&2; cat "$dir/build.log" >&2; exit 1; }
    end=$(now_ms)
    echo $((end - start))
}

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

declare -A CLEAN CRATE INCR
for dir in ours rmcp; do
    (cd "$dir" && CARGO_TARGET_DIR="$PWD/target" cargo fetch --quiet)
    (cd "$dir" && CARGO_TARGET_DIR="$PWD/target" cargo clean --quiet)
    CLEAN[$dir]=$(build "$dir")
    (cd "$dir" && CARGO_TARGET_DIR="$PWD/target" cargo clean --quiet -p "bench-$dir")
    CRATE[$dir]=$(build "$dir")
    times=()
    for i in $(seq 1 "$RUNS"); do
        sed -i "s/EDIT_MARKER_[0-9]* 7\"/EDIT_MARKER_$i 7\"/" "$dir/src/lib.rs"
        times+=("$(build "$dir")")
    done
    INCR[$dir]=$(median "${times[@]}")
    sed -i "s/EDIT_MARKER_[0-9]* 7\"/EDIT_MARKER_0 7\"/" "$dir/src/lib.rs"
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
printf '%-12s %12s %12s %8s\n' "build" "ours (ms)" "rmcp (ms)" "ratio"
printf '%-12s %12s %12s %8s\n' "clean" "${CLEAN[ours]}" "${CLEAN[rmcp]}" "$(ratio "${CLEAN[ours]}" "${CLEAN[rmcp]}")"
printf '%-12s %12s %12s %8s\n' "crate" "${CRATE[ours]}" "${CRATE[rmcp]}" "$(ratio "${CRATE[ours]}" "${CRATE[rmcp]}")"
printf '%-12s %12s %12s %8s\n' "incremental" "${INCR[ours]}" "${INCR[rmcp]}" "$(ratio "${INCR[ours]}" "${INCR[rmcp]}")"
echo "(ratio = ours / rmcp; 50 tools each; debug profile; incremental = median of $RUNS edits)"
