#!/usr/bin/env bash
# Trains the engine's network evaluation on the exact values of a database
# directory and writes its weights to src/search/engine/net_weights.bin (little-endian
# f32s) and the fit's report to src/search/engine/net_weights.rs, which reads them (the
# `net` evaluation: `engine:...,eval=net` in the arena, `setoption name Eval value
# net` in uci).
#   tools/train-net.sh DB [GAMES] [PER_SECTOR] [EPOCHS]
# DB must hold the whole standard game (moving phase and placement sectors).
# Defaults: 40000 games, 2000 positions per sector, 12 epochs; seed 1 throughout,
# so a run reproduces the shipped weights. The samples go to target/net-samples.bin.
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:?usage: tools/train-net.sh DB [GAMES] [PER_SECTOR] [EPOCHS]}
games=${2:-40000}
per=${3:-2000}
epochs=${4:-12}
cargo build --release --example train_net
target/release/examples/train_net sample "$db" target/net-samples.bin "$games" "$per" 1
target/release/examples/train_net train target/net-samples.bin src/search/engine/net_weights.rs "$epochs" 1
cargo fmt -- src/search/engine/net_weights.rs
