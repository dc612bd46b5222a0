#!/usr/bin/env bash
# Times the compile of 50 tools written with our #[tool] against the same 50 tools written with
# rmcp's #[tool] + schemars, and prints the ratios (ours / rmcp; below 1 means we are faster).
#
#   clean        : `cargo clean`, then `cargo build` (every dependency included)
#   crate        : `cargo clean -p <bench crate>`, then `cargo build` (dependencies already built)
#   incremental  : edit one string literal in one tool body, then `cargo build` (median of RUNS)
#
# Debug profile, each crate with its own target directory. Usage: ./run.sh [RUNS] (default 5).
# The two crates are generated into target/bench-compile/ by generate.py; nothing is committed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
RUNS="${1:-5}"
cd "$(python3 "$here/generate.py")"

# build DIR: runs `cargo build` and prints "WALL_MS CPU_MS" (CPU = user + system of the whole
# build, which is steadier than wall time on a loaded machine).
build() {
    local dir="$1"
    (cd "$dir" && CARGO_TARGET_DIR="$PWD/target" /usr/bin/time -o "$PWD/time.log" -f '%e %U %S' \
        cargo build --quiet 2>"$PWD/build.log" >/dev/null) || {
        echo "build of $dir failed:" >&2; cat "$dir/build.log" >&2; exit 1; }
    tail -1 "$dir/time.log" | awk '{ printf "%d %d\n", $1 * 1000, ($2 + $3) * 1000 }'
}

# warm DIR: an untimed build, so a timed build only compiles what the step changed (the
# workspace crates `ours` depends on may have been edited meanwhile).
warm() { (cd "$1" && CARGO_TARGET_DIR="$PWD/target" cargo build --quiet 2>/dev/null >/dev/null) || true; }

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
edit() { sed -i "s/EDIT_MARKER_[0-9]* 7\"/EDIT_MARKER_$2 7\"/" "$1/src/lib.rs"; }

declare -A CLEAN_W CLEAN_C CRATE_W CRATE_C INCR_W INCR_C
for dir in ours rmcp; do
    (cd "$dir" && CARGO_TARGET_DIR="$PWD/target" cargo fetch --quiet)
    (cd "$dir" && CARGO_TARGET_DIR="$PWD/target" cargo clean --quiet)
    read -r CLEAN_W[$dir] CLEAN_C[$dir] < <(build "$dir")
    warm "$dir"
    (cd "$dir" && CARGO_TARGET_DIR="$PWD/target" cargo clean --quiet -p "bench-$dir")
    read -r CRATE_W[$dir] CRATE_C[$dir] < <(build "$dir")
done
# Incremental rebuilds, interleaved so both see the same machine load.
declare -a OW OC RW RC
for i in $(seq 1 "$RUNS"); do
    warm ours; edit ours "$i"; read -r w c < <(build ours); OW+=("$w"); OC+=("$c")
    warm rmcp; edit rmcp "$i"; read -r w c < <(build rmcp); RW+=("$w"); RC+=("$c")
done
INCR_W[ours]=$(median "${OW[@]}"); INCR_C[ours]=$(median "${OC[@]}")
INCR_W[rmcp]=$(median "${RW[@]}"); INCR_C[rmcp]=$(median "${RC[@]}")
edit ours 0; edit rmcp 0

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
row() { printf '%-20s %12s %12s %8s\n' "$1" "$2" "$3" "$(ratio "$2" "$3")"; }
printf '%-20s %12s %12s %8s\n' "build" "ours (ms)" "rmcp (ms)" "ratio"
row "clean, wall" "${CLEAN_W[ours]}" "${CLEAN_W[rmcp]}"
row "clean, cpu" "${CLEAN_C[ours]}" "${CLEAN_C[rmcp]}"
row "crate, wall" "${CRATE_W[ours]}" "${CRATE_W[rmcp]}"
row "crate, cpu" "${CRATE_C[ours]}" "${CRATE_C[rmcp]}"
row "incremental, wall" "${INCR_W[ours]}" "${INCR_W[rmcp]}"
row "incremental, cpu" "${INCR_C[ours]}" "${INCR_C[rmcp]}"
echo "(ratio = ours / rmcp; 50 tools each; debug profile; incremental = median of $RUNS interleaved edits)"
