#!/usr/bin/env python3
"""Sizes of a database directory, read from its files' headers (docs/FORMAT.md).

    tools/db-size.py DB [--by-ply]

Prints a Markdown table: per phase (the moving-phase subspaces `k-l.mdb`, the
placement sectors `k-l-hk-hl.mdb`; with `--by-ply` one row per placement ply,
the ply being 2N minus the stones in both hands for N stones per side) the files,
the slots, the bytes on disk and the bits per slot of the WDL section, of the
depth section and of the whole files (headers and block tables included); then
the whole directory, and the format versions and header flags found.

Any directory millbase reads will do: as `millbase build` writes it, repacked
(`millbase repack`), or WDL-only (`millbase pack --wdl-only`). A sector marked
`NAME.derived` (`millbase pack --derive`) has no file: its slots count, since they
are still answered, and its bytes are 0. Standard library only.
"""

import os
import re
import struct
import sys
from math import comb

POINTS = 24


def symmetries():
    """The 16 symmetries of the standard board as permutations of the points in
    FEN order: three rings of 8 (inner, middle, outer), each clockwise from twelve
    o'clock, so that a quarter turn adds 2 within a ring, a mirror negates, and the
    swap of the inner and outer squares exchanges rings 0 and 2."""
    perms = []
    for swap in (False, True):
        for mirror in (False, True):
            for turn in range(4):
                perm = []
                for p in range(POINTS):
                    ring, i = divmod(p, 8)
                    if swap:
                        ring = 2 - ring
                    if mirror:
                        i = -i
                    perm.append(ring * 8 + (i + 2 * turn) % 8)
                perms.append(perm)
    return perms


def classes_by_size():
    """classes[k]: the symmetry classes of sets of k points (Burnside's lemma: the
    average over the symmetries of the sets each one fixes, which are unions of its
    cycles)."""
    total = [0] * (POINTS + 1)
    for perm in symmetries():
        seen = [False] * POINTS
        poly = [1] + [0] * POINTS  # sets fixed by perm, by size
        for start in range(POINTS):
            if seen[start]:
                continue
            length, p = 0, start
            while not seen[p]:
                seen[p] = True
                p = perm[p]
                length += 1
            poly = [poly[n] + (poly[n - length] if n >= length else 0) for n in range(POINTS + 1)]
        total = [t + c for t, c in zip(total, poly)]
    return [t // 16 for t in total]


CLASSES = classes_by_size()


def sector_slots(k, l):
    """Index slots of a sector: classes of the side to move's stones times the
    opponent's sets among the other points ("Computing a slot")."""
    return CLASSES[k] * comb(POINTS - k, l)


def header(path):
    """The fields of a database file's header this table needs."""
    with open(path, "rb") as f:
        h = f.read(256)
    if len(h) < 256 or h[:8] != b"MILLBASE":
        raise ValueError(f"{path}: not a millbase database file")
    version, = struct.unpack_from("<I", h, 8)
    variant = h[16:48].rstrip(b"\0").decode()
    k, l, size = struct.unpack_from("<IIQ", h, 56)
    wdl_len, = struct.unpack_from("<Q", h, 104 + 16)
    depth_len, = struct.unpack_from("<Q", h, 152 + 16)
    hk, hl = h[200], h[201]
    flags, = struct.unpack_from("<I", h, 202) if version >= 2 else (0,)
    return dict(version=version, variant=variant, k=k, l=l, hk=hk, hl=hl, size=size,
                wdl=wdl_len, depth=depth_len, flags=flags)


def stones(variant):
    """Stones per side of a rule set's name: `standard` 9, `standard-N` N."""
    m = re.fullmatch(r"standard(?:-(\d+))?", variant)
    return int(m.group(1)) if m and m.group(1) else 9


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    by_ply = "--by-ply" in sys.argv[1:]
    if len(args) != 1 or any(a not in ("--by-ply",) for a in sys.argv[1:] if a.startswith("--")):
        sys.exit(__doc__)
    db = args[0]
    groups = {}  # name -> [files, derived, slots, bytes, wdl, depth]
    kinds = {}
    per_side = None

    def add(group, files, derived, slots, size, wdl, depth):
        g = groups.setdefault(group, [0, 0, 0, 0, 0, 0])
        for i, v in enumerate((files, derived, slots, size, wdl, depth)):
            g[i] += v

    names = sorted(os.listdir(db))
    for name in names:
        if name.endswith(".mdb"):
            h = header(os.path.join(db, name))
            per_side = per_side or stones(h["variant"])
            hands = (h["hk"], h["hl"])
            kind = f"version {h['version']}, flags {h['flags']}, {'full' if h['depth'] or h['version'] == 1 else 'WDL-only'}"
            kinds[kind] = kinds.get(kind, 0) + 1
            entry = (1, 0, h["size"], os.path.getsize(os.path.join(db, name)), h["wdl"], h["depth"])
        elif name.endswith(".derived"):
            nums = name[: -len(".derived")].split("-")
            if not all(n.isdigit() for n in nums) or len(nums) not in (2, 4):
                continue
            nums = [int(n) for n in nums]
            hands = tuple(nums[2:]) if len(nums) == 4 else (0, 0)
            entry = (0, 1, sector_slots(nums[0], nums[1]), 0, 0, 0)
        else:
            continue
        if hands == (0, 0):
            group = "moving phase"
        elif by_ply:
            group = ("ply", hands)
        else:
            group = "placement phase"
        add(group, *entry)

    if not groups:
        sys.exit(f"{db}: no database files (*.mdb) here")
    n = per_side or 9
    rows = []
    if "moving phase" in groups:
        rows.append(("moving phase", groups["moving phase"]))
    plies = sorted((g for g in groups if isinstance(g, tuple)), key=lambda g: -sum(g[1]))
    by = {}
    for g in plies:
        ply = 2 * n - sum(g[1])
        by.setdefault(ply, [0] * 6)
        by[ply] = [a + b for a, b in zip(by[ply], groups[g])]
    for ply in sorted(by, reverse=True):
        rows.append((f"placement ply {ply}", by[ply]))
    if plies:
        rows.append(("placement phase", [sum(by[p][i] for p in by) for i in range(6)]))
    elif "placement phase" in groups:
        rows.append(("placement phase", groups["placement phase"]))
    whole = [sum(groups[g][i] for g in groups) for i in range(6)]
    rows.append(("**whole**", whole))

    print("| sectors | files | derived | slots | bytes | WDL bit/slot | depth bit/slot | total bit/slot |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, (files, derived, slots, size, wdl, depth) in rows:
        bits = lambda b: f"{8 * b / slots:.3f}" if slots else "-"
        print(f"| {label} | {files} | {derived} | {slots:,} | {size:,} | {bits(wdl)} | {bits(depth)} | {bits(size)} |")
    print()
    print(f"{whole[3]:,} bytes in {whole[0]} files ({whole[3] / 1e9:.2f} GB); "
          + "; ".join(f"{count} files {kind}" for kind, count in sorted(kinds.items())))


if __name__ == "__main__":
    main()
