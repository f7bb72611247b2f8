#!/usr/bin/env bash
# The engine issue's headline matches at 1 s a move, one game at a time, resumable:
# every finished game is appended to a log in LOGDIR, and running the script again
# (same arguments) plays only the games the logs lack, then prints the reports.
#
#   tools/headline-matches.sh MILLBASE LOGDIR [DB]
#
#   (a) millbase's engine (no databases) against Sanmill's (`tgf uci`, skill 30, no
#       databases; DB only judges the plies), 1 s a move each, colours alternating:
#       from the 24 first placements x both colours (sanmill-fp.jsonl) and from the
#       empty board (sanmill-empty.jsonl), a pair of each in turn until FP_GAMES
#       and EMPTY_GAMES;
#   (b) then millbase's engine (no databases) against `perfect` (DB, default
#       db: the whole game, as `millbase build` writes it) from the 48
#       first-placement starts, 1 s a move
#       (perfect-fp.jsonl), until PERFECT_GAMES.
#
# Environment: FP_GAMES (default 96), EMPTY_GAMES (104), PERFECT_GAMES (96),
# MOVETIME (ms, 1000), TGF (/tmp/sanmill/target/release/tgf). Run it under
# `nice -n 5`; it plays one game at a time (one core).
set -euo pipefail
millbase=${1:?usage: tools/headline-matches.sh MILLBASE LOGDIR [DB]}
logs=${2:?usage: tools/headline-matches.sh MILLBASE LOGDIR [DB]}
db=${3:-db}
fp=${FP_GAMES:-96}
empty=${EMPTY_GAMES:-104}
perfect=${PERFECT_GAMES:-96}
ms=${MOVETIME:-1000}
tgf=${TGF:-/tmp/sanmill/target/release/tgf}
match="$(dirname "$0")/match.py"
mkdir -p "$logs"

sanmill() { # OPENINGS LOG GAMES [--json]
    python3 "$match" sanmill --movetime "$ms" --tgf "$tgf" --millbase "$millbase" --db "$db" \
        --openings "$1" --log "$logs/$2" --games "$3" "${@:4}"
}
perfect_match() { # GAMES [--json]
    python3 "$match" perfect "engine:movetime=$ms,db=no" --db "$db" --millbase "$millbase" \
        --log "$logs/perfect-fp.jsonl" --games "$1" "${@:2}"
}
games_in() { [ -f "$logs/$1" ] && grep -c . "$logs/$1" || echo 0; }

# (a) a pair from the first placements, then a pair from the empty board, in turn.
while [ "$(games_in sanmill-fp.jsonl)" -lt "$fp" ] || [ "$(games_in sanmill-empty.jsonl)" -lt "$empty" ]; do
    n=$(games_in sanmill-fp.jsonl)
    if [ "$n" -lt "$fp" ]; then
        sanmill first-placements sanmill-fp.jsonl $((n - n % 2 + 2)) >/dev/null
    fi
    n=$(games_in sanmill-empty.jsonl)
    if [ "$n" -lt "$empty" ]; then
        sanmill random:0 sanmill-empty.jsonl $((n - n % 2 + 2)) >/dev/null
    fi
done
# (b)
perfect_match "$perfect" >/dev/null

for log in sanmill-fp sanmill-empty perfect-fp; do
    echo "== $log"
    python3 "$match" report "$logs/$log.jsonl"
done
