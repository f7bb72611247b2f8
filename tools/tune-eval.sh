#!/usr/bin/env bash
# Fits the engine's evaluation weights to the exact values of a database directory
# and writes them, with the fit's report, to src/search/engine/tuned.rs (the `tuned` weight
# set: `engine:...,eval=tuned` in the arena, `setoption name Eval value tuned` in uci).
#   tools/tune-eval.sh DB [PER_SECTOR]     (default 20000 positions per sector)
# With the placement sectors in DB, placement positions are sampled too (every
# sector, so every ply) and the report gives the held-out figures per ply.
# RAYON_NUM_THREADS=1 keeps it to one core.
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:?usage: tools/tune-eval.sh DB [PER_SECTOR]}
per=${2:-20000}
cargo run --release --example tune_eval -- "$db" "$per" src/search/engine/tuned.rs
cargo fmt -- src/search/engine/tuned.rs
