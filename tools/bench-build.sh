#!/usr/bin/env bash
# Builds every pair with at most N stones (default 10) into a fresh temporary
# directory and prints, per pair, positions, wall seconds, positions per second per
# thread, peak memory, bytes on disk and bits per position of the WDL and depth
# sections; then the total wall time and the verify result. The files are the fast
# form's (`--form fast`: the solve alone, no recode).
#   tools/bench-build.sh [N] [THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10}
threads=${2:-$(nproc)}
cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/millbase
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
start=$(date +%s.%N)
"$bin" build --quiet --form fast --db "$dir" --max-stones "$n" --threads "$threads"
end=$(date +%s.%N)
echo "total wall: $(echo "$end - $start" | bc) s for k+l <= $n on $threads threads ($(nproc) cores)"
du -sb "$dir" | awk '{print "bytes on disk:", $1}'
"$bin" verify --db "$dir" | tail -1
