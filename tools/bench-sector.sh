#!/usr/bin/env bash
# Times the build of one sector on its own: a placement sector K-L-HK-HL (with
# its partner L-K-HL-HK under rules whose stones move during placement, `lasker`:
# the two are solved as a pair), or a moving-phase pair K-L (both of its
# subspaces, K-L and L-K).
#
#   tools/bench-sector.sh DB SECTOR [THREADS]
#
# DB is a finished database directory as `millbase build --form fast` writes it. A new
# directory beside DB gets hard links to every file of DB but the sector's own, so
# the sector's children are there and the sectors it leads into count as built
# (the build checks their headers and checksums and skips them); `millbase build
# --only SECTOR --form fast`, under DB's rules, then builds the sector alone (the
# solve, no recode), and the directory
# is removed. Prints the build's table, the wall, user
# and system time and the peak memory (with GNU time, else the shell's time), and
# whether each new file equals DB's byte for byte (it does when DB was written by
# `millbase build --form fast` of the same format version: the build is deterministic).
#
# THREADS defaults to all cores. The binary is $MILLBASE (default
# target/release/millbase, built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:?usage: tools/bench-sector.sh DB SECTOR [THREADS]}
sector=${2:?usage: tools/bench-sector.sh DB SECTOR [THREADS]}
threads=${3:-$(nproc)}
bin=${MILLBASE:-target/release/millbase}
[ -x "$bin" ] || cargo build --release --quiet

IFS=- read -r -a n <<<"$sector"
case ${#n[@]} in
    2) phase=moving; files=("${n[0]}-${n[1]}.mdb" "${n[1]}-${n[0]}.mdb") ;;
    4) phase=placement; files=("$sector.mdb") ;;
    *) echo "error: '$sector' is not a sector: write K-L or K-L-HK-HL" >&2; exit 2 ;;
esac
for f in "${files[@]}"; do
    [ -f "$db/$f" ] || { echo "error: $db/$f is missing: DB must hold the sector to compare with" >&2; exit 2; }
done

rules=$("$bin" info "$db/${files[0]}" | awk '$1 == "rules" { print $2 }')
if [ "$phase" = placement ] && [[ $rules == lasker* ]] && [ "${n[0]}-${n[2]}" != "${n[1]}-${n[3]}" ]; then
    files+=("${n[1]}-${n[0]}-${n[3]}-${n[2]}.mdb")
fi
# Hard links (a symbolic link is not taken for a finished file), so the directory
# must be on DB's file system: beside it.
abs=$(cd "$db" && pwd)
dir=$(mktemp -d "$(dirname "$abs")/bench-sector.XXXXXX")
trap 'rm -rf "$dir"' EXIT
for path in "$abs"/*.mdb; do
    ln "$path" "$dir/"
done
for f in "${files[@]}"; do rm -f "$dir/$f"; done

cmd=("$bin" build --db "$dir" --rules "$rules" --phase "$phase" --only "$sector" --form fast --threads "$threads" --quiet)
echo "${cmd[*]}   ($threads threads, $(nproc) cores)"
if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%e s wall, %U s user, %S s system, peak %M KiB' "${cmd[@]}"
else
    TIMEFORMAT='%R s wall, %U s user, %S s system'
    time "${cmd[@]}"
fi
for f in "${files[@]}"; do
    if cmp -s "$dir/$f" "$db/$f"; then
        echo "$f: the same bytes as $db/$f"
    else
        echo "$f: differs from $db/$f (a file of another format version? compare the values with: cargo run --release --example same_values -- DIR_A DIR_B)"
    fi
done
