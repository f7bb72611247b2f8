#!/usr/bin/env bash
# Measures `millbase serve` on a database directory: the start-up time (from the
# command to the socket listening, as printed, and to the first answer of
# /api/position), then wrk's requests per second and latency percentiles for
# /api/position on one position, with C connections over 2 threads for S seconds.
#   tools/bench-serve.sh DB 'POSITION' [SECONDS] [CONNECTIONS]
# Needs wrk (Debian package wrk) and curl.
set -euo pipefail
cd "$(dirname "$0")/.."
db=$1
position=$2
seconds=${3:-10}
connections=${4:-50}
cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/millbase
query=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$position")
out=$(mktemp)
start=$(date +%s%N)
"$bin" serve --db "$db" --addr 127.0.0.1:0 >"$out" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$out"' EXIT
until grep -q 'http://' "$out"; do sleep 0.001; done
listening=$(date +%s%N)
addr=$(grep -o 'http://[0-9.:]*' "$out")
url="$addr/api/position?fen=$query"
status=$(curl -s -o /dev/null -w '%{http_code}' "$url")
answered=$(date +%s%N)
echo "$(head -1 "$out")"
echo "start-up: listening after $(((listening - start) / 1000000)) ms, first answer (HTTP $status) after $(((answered - start) / 1000000)) ms"
curl -s "$url" | head -c 300
echo
wrk -t2 -c"$connections" -d"${seconds}s" --latency "$url"
