#!/bin/sh
# Draw rate of the engine against perfect play, from moving-phase starts the
# databases cover (every descendant of a 5-5 or 6-4 position has fewer stones).
#
#   tools/arena-drawrate.sh [DB] [GAMES] [DEPTHS...]
#
# Each pair of games starts from 10 random plies after the start position; the
# engine does not probe the databases (db=no), the perfect player does. Prints one
# line per depth: games, A (engine) wins / draws / B (perfect) wins, draw rate with
# its 95% Wilson interval, and the results from starts the databases call drawn.
set -eu
DB=${1:-db}
GAMES=${2:-400}
shift 2 2>/dev/null || shift $#
DEPTHS=${*:-1 2 3 4 5}
BIN=${MILLBASE:-target/release/millbase}
[ -x "$BIN" ] || cargo build --release
START55="O@O@O@O@/*O@*****/******** w m s 5 0 5 0 0 0 -1 -1 -1 -1 0 0 1"
START64="O@O@O@O@/*OO*****/******** w m s 6 0 4 0 0 0 -1 -1 -1 -1 0 0 1"
for start in "$START55" "$START64"; do
  echo "start: $start"
  for d in $DEPTHS; do
    t0=$(date +%s)
    "$BIN" arena "engine:depth=$d,db=no" perfect --db "$DB" --start "$start" \
      --openings random:10 --games "$GAMES" --threads 2 --seed 1 --quiet --json |
      python3 -c '
import json, sys
s = json.load(sys.stdin); r = s["draw_rate"]; d = s["start_drawn"]
print("  depth %s: %d games, %d/%d/%d, draws %.1f%% [%.1f%%, %.1f%%]; from drawn starts %d/%d held"
      % (sys.argv[1], s["games"], s["a_wins"], s["draws"], s["b_wins"],
         100 * r["rate"], 100 * r["low"], 100 * r["high"], d["draws"], d["games"]), end="")
' "$d"
    echo " ($(( $(date +%s) - t0 )) s)"
  done
done
