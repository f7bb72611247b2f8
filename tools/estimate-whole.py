#!/usr/bin/env python3
"""Estimates the size of a repack that is under way, from the files it has written.

    tools/estimate-whole.py SOURCE_DIR OUT_DIR

For every database file of SOURCE_DIR (what `millbase build` wrote), OUT_DIR's
file of the same name counts as it is if it is there (a finished repack); a file
not repacked yet is estimated as its source's size times the ratio (repacked bytes
over source bytes) of the finished files of its group. Groups: the moving phase,
and each placement ply (18 minus the stones in both hands), as the nearest
finished ply's ratio where a ply has no finished file. Prints per group the files
done, bytes done, the ratio and the estimate, then the whole.
"""

import os
import sys


def group(name):
    nums = [int(x) for x in name.split("-")]
    return "moving" if len(nums) == 2 else 18 - nums[2] - nums[3]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, out = sys.argv[1], sys.argv[2]
    groups = {}
    for f in sorted(os.listdir(src)):
        if not f.endswith(".mdb"):
            continue
        name = f[:-4]
        before = os.path.getsize(os.path.join(src, f))
        path = os.path.join(out, f)
        after = os.path.getsize(path) if os.path.exists(path) else None
        groups.setdefault(group(name), []).append((before, after))
    ratios = {}
    for g, files in groups.items():
        done = [(b, a) for b, a in files if a is not None]
        if done:
            ratios[g] = sum(a for _, a in done) / sum(b for b, _ in done)
    plies = sorted(g for g in ratios if g != "moving")

    def ratio(g):
        if g in ratios:
            return ratios[g], ""
        near = min(plies, key=lambda p: abs(p - g))
        return ratios[near], f" (ply {near}'s)"

    print("| group | files done | source bytes | repacked bytes so far | ratio | estimate, bytes |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    total = done_total = 0
    order = ["moving"] + sorted(g for g in groups if g != "moving")
    for g in order:
        files = groups[g]
        r, note = ratio(g)
        done = [a for _, a in files if a is not None]
        est = sum(a if a is not None else b * r for b, a in files)
        total += est
        done_total += sum(done)
        label = g if g == "moving" else f"ply {g}"
        print(
            f"| {label} | {len(done)}/{len(files)} | {sum(b for b, _ in files):,} | "
            f"{sum(done):,} | {r:.3f}{note} | {est:,.0f} |"
        )
    print(f"\nrepacked so far: {done_total:,} bytes; whole, estimated: {total:,.0f} bytes ({total / 1e9:.2f} GB)")


if __name__ == "__main__":
    main()
