#!/usr/bin/env bash
# ARM64 (aarch64-unknown-linux-gnu): cross-compiles the probe library, the C ABI and
# the `millbase` program with Debian's cross toolchain, then runs under qemu-user
#  1. the probe library's own tests (no default features: rules and reading tables),
#  2. the C program's check (capi/tests/c_program.rs): capi/tests/probe.c, compiled
#     for ARM64 against the ARM64 C library, answers like this machine's `millbase`
#     on a database this machine built,
#  3. the ARM64 `millbase` program building a reduced game, whose files must be
#     byte for byte those of this machine's build, and probing it.
# Installs what it needs (the Rust target, gcc-aarch64-linux-gnu, qemu-user) when
# missing. Usage: tools/aarch64.sh [--quick] [--profile PROFILE] (default: ci).
# `--quick` (what CI runs) skips the program (3.).
set -euo pipefail
cd "$(dirname "$0")/.."
profile=ci
quick=false
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=true; shift ;;
    --profile) profile=$2; shift 2 ;;
    *) echo "usage: tools/aarch64.sh [--quick] [--profile PROFILE]" >&2; exit 2 ;;
  esac
done
target=aarch64-unknown-linux-gnu
sysroot=/usr/aarch64-linux-gnu

rustup target list --installed | grep -qx "$target" || rustup target add "$target"
if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user >/dev/null
fi
# The linker and the qemu runner for the target are in .cargo/config.toml; the C
# parts of dependencies (zstd) need the cross C compiler too.
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
runner="qemu-aarch64 -L $sysroot"

echo "== ARM64: building the library and the C ABI"
cargo build --profile "$profile" --target "$target" -p millbase-capi --lib

echo "== ARM64: the probe library's tests under qemu"
cargo test --profile "$profile" --target "$target" --no-default-features --lib -p millbase

echo "== ARM64: the C program under qemu against this machine's millbase"
# This machine's program, which `cargo test` at the root has built already in CI.
[[ -x target/$profile/millbase ]] || cargo build --profile "$profile" --bin millbase
MILLBASE_CAPI_CC=aarch64-linux-gnu-gcc MILLBASE_CAPI_LIB="$PWD/target/$target/$profile/deps" \
  MILLBASE_CAPI_RUNNER="$runner" \
  cargo test --profile "$profile" --test c_program the_c_program_agrees_with_the_cli -- --nocapture

if $quick; then
  echo "ARM64: quick checks passed"
  exit 0
fi

echo "== ARM64: the program builds a reduced game, the same bytes as here"
cargo build --profile "$profile" --target "$target" --bin millbase
arm_bin=target/$target/$profile/millbase
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
target/$profile/millbase build --rules standard-4 --quiet --db "$scratch/here"
$runner "$arm_bin" build --rules standard-4 --quiet --db "$scratch/arm"
for f in "$scratch"/here/*.mdb; do
  cmp "$f" "$scratch/arm/$(basename "$f")"
done
# The manifests differ only in the measured build times.
timing='"(build_seconds|positions_per_second)"'
diff <(grep -Ev "$timing" "$scratch/here/manifest.json") \
     <(grep -Ev "$timing" "$scratch/arm/manifest.json")
echo "files: $(ls "$scratch/arm" | wc -l), equal to this machine's build"
here=$(target/$profile/millbase probe --db "$scratch/here" --json startpos)
arm=$($runner "$arm_bin" probe --db "$scratch/arm" --json startpos)
[[ "$here" == "$arm" ]] || { echo "probe differs: here $here, arm64 $arm" >&2; exit 1; }
echo "start position: $arm"
echo "ARM64: all checks passed"
