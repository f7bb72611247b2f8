#!/usr/bin/env bash
# Figures of a database directory holding the whole standard game (both phases),
# as docs/BENCHMARKS.md reports them:
#   1. the value of the empty board from its table (`millbase solve`), the time of
#      the whole process; with COLD=1 the page cache is dropped first (needs root:
#      it writes /proc/sys/vm/drop_caches), then the same again warm;
#   2. where that answer comes from (`millbase probe startpos --json`);
#   3. the engine at depth 6 against perfect play from every first placement with
#      both colours (48 games), judged ply by ply against the tables;
#   4. random placement probes (WDL and full value) and best-ply latency per
#      sector, blocks cold on the first pass and warm on the second
#      (`format_bench placement`, one thread, PROBES per sector);
#   5. with TABLES=1, the placement tables against the opening search on random
#      positions of every ply (tests/integration/standard_tables.rs; about 20 minutes).
#
#   tools/measure-db.sh [DB] [PROBES]        (defaults: db, 200000)
#
# Nothing is written into DB (`solve --save-plies 0`). The binary is $MILLBASE
# (default target/release/millbase, built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:-db}
probes=${2:-200000}
bin=${MILLBASE:-target/release/millbase}
[ -x "$bin" ] || cargo build --release --quiet
TIMEFORMAT='  (%R s wall, %U s user)'

echo "== 1. the empty board from its table"
if [ "${COLD:-0}" = 1 ]; then
    sync
    echo 3 >/proc/sys/vm/drop_caches
    echo "page cache dropped; cold:"
    time "$bin" solve --db "$db" --save-plies 0
    echo "warm:"
fi
time "$bin" solve --db "$db" --save-plies 0

echo "== 2. the source of the answer"
"$bin" probe startpos --db "$db" --json

echo "== 3. depth-6 engine against perfect play, every first placement x both colours"
time "$bin" arena engine:depth=6 perfect --openings first-placements --games 1 --db "$db" --quiet

echo "== 4. random placement probes and best plies, one thread, $probes per sector"
time RAYON_NUM_THREADS=1 cargo run --release --quiet --example format_bench -- placement "$db" "$probes"

if [ "${TABLES:-0}" = 1 ]; then
    echo "== 5. the placement tables against the opening search"
    time MILLBASE_DB="$db" cargo test --release --test integration standard_tables:: -- --ignored --nocapture
fi
