#!/usr/bin/env python3
"""Estimates the size of a repack that is under way, from the files it has written.

    tools/estimate-whole.py SOURCE_DIR OUT_DIR [--fit MILLBASE]

For every database file of SOURCE_DIR (what `millbase build --form fast` wrote), OUT_DIR's
file of the same name counts as it is if it is there (a finished repack); a file
not repacked yet is estimated as its source's size times the ratio (repacked bytes
over source bytes) of the finished files of its group. Groups: the moving phase,
and each placement ply (18 minus the stones in both hands), as the nearest
finished ply's ratio where a ply has no finished file. Prints per group the files
done, bytes done, the ratio and the estimate, then the whole.

With `--fit MILLBASE` (the millbase binary, for `millbase info`), a second
estimate of the placement files not repacked yet: a least-squares fit of each
finished placement file's bytes (over a million slots) to its source's lost, won
and drawn slots (a lost slot carries a distance; results cost what the model
makes of them), applied to the unfinished files' counts, with the fit's
leave-one-out error.
"""

import os
import subprocess
import sys


def group(name):
    nums = [int(x) for x in name.split("-")]
    return "moving" if len(nums) == 2 else 18 - nums[2] - nums[3]


def counts(millbase, path):
    """Slots, then lost, won and drawn slots of a file, from `millbase info`."""
    info = subprocess.run([millbase, "info", path], capture_output=True, text=True, check=True)
    fields = dict(line.split(None, 1) for line in info.stdout.splitlines() if line.strip())
    slots = int(fields["index"].split()[-1])
    return slots, [float(fields[k].split()[0]) for k in ("losses", "wins", "draws")]


def solve(rows, ys):
    """Least squares `x` of `rows · x = ys` (normal equations, Gauss-Jordan)."""
    n = len(rows[0])
    a = [[sum(r[i] * r[j] for r in rows) for j in range(n)] for i in range(n)]
    b = [sum(r[i] * y for r, y in zip(rows, ys)) for i in range(n)]
    for c in range(n):
        p = max(range(c, n), key=lambda i: abs(a[i][c]))
        a[c], a[p], b[c], b[p] = a[p], a[c], b[p], b[c]
        for i in range(n):
            if i != c:
                f = a[i][c] / a[c][c]
                a[i] = [x - f * y for x, y in zip(a[i], a[c])]
                b[i] -= f * b[c]
    return [b[i] / a[i][i] for i in range(n)]


def fit(src, out, millbase):
    known, unknown = [], []
    for f in sorted(os.listdir(src)):
        if not f.endswith(".mdb") or group(f[:-4]) == "moving":
            continue
        slots, x = counts(millbase, os.path.join(src, f))
        path = os.path.join(out, f)
        if not os.path.exists(path):
            unknown.append(x)
        elif slots > 1_000_000:
            known.append((x, os.path.getsize(path)))
    xs, ys = [x for x, _ in known], [y for _, y in known]
    coef = solve(xs, ys)
    dot = lambda c, x: sum(a * b for a, b in zip(c, x))
    loo = []
    for i in range(len(xs)):
        c = solve(xs[:i] + xs[i + 1 :], ys[:i] + ys[i + 1 :])
        loo.append(dot(c, xs[i]) - ys[i])
    rest = sum(dot(coef, x) for x in unknown)
    print(
        f"fit over {len(xs)} finished placement files: bytes = "
        f"{coef[0]:.4f}·lost + {coef[1]:.4f}·won + {coef[2]:.4f}·drawn; "
        f"leave-one-out error {sum(abs(e) for e in loo) / sum(ys):.3f} of their bytes "
        f"(bias {sum(loo) / sum(ys):+.3f}); the {len(unknown)} unfinished placement files: "
        f"{rest:,.0f} bytes"
    )
    return rest


def main():
    args = sys.argv[1:]
    millbase = None
    if len(args) == 4 and args[2] == "--fit":
        millbase = args[3]
        args = args[:2]
    if len(args) != 2:
        sys.exit(__doc__)
    src, out = args
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
    if millbase:
        rest = fit(src, out, millbase)
        whole = done_total + rest
        print(f"whole, estimated by the fit: {whole:,.0f} bytes ({whole / 1e9:.2f} GB)")


if __name__ == "__main__":
    main()
