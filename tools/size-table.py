#!/usr/bin/env python3
"""Size tables from the log of `millbase repack` (its line per sector).

    tools/size-table.py REPACK.LOG [--full] [--before EARLIER.LOG ...]

Prints Markdown: bits per slot of the WDL and depth sections before (the source
directory) and after (the repacked one), summed over the moving phase (per
subspace) and over the placement phase (per ply, the ply being 18 minus the stones
in both hands), then the totals. With `--full`, one row per sector instead.
Sectors the log reports as "already repacked" count too (the log still gives
their sizes). Bytes are recovered from bits per slot and slots, so totals are
rounded to about a byte per sector.

With `--before`, "before" is what an earlier repack wrote (the "after" columns of
its logs, later logs winning) instead of the source directory, for the sectors
both logs have: the gain of a new coding over the last one.
"""

import sys
from collections import OrderedDict


def rows(path):
    seen = OrderedDict()
    for line in open(path):
        parts = line.split()
        # A file's row: its sector's name (digits and dashes), then its slots
        # (the summary line "repacked N files ..." is not one).
        name_ok = parts and parts[0].replace("-", "").isdigit()
        if len(parts) < 9 or not name_ok or not parts[1].isdigit():
            continue
        name, slots = parts[0], int(parts[1])
        wdl0, wdl1, dep0, dep1 = map(float, parts[2:6])
        seen[name] = (slots, wdl0, wdl1, dep0, dep1)
    return seen


def group(name):
    nums = [int(x) for x in name.split("-")]
    if len(nums) == 2:
        return "moving " + name
    k, l, hk, hl = nums
    return "placement ply %d" % (18 - hk - hl)


def fmt(label, slots, b):
    wdl0, wdl1, dep0, dep1 = (x / slots for x in b)
    return "| %s | %s | %.3f | **%.3f** | %.3f | **%.3f** | %.3f | **%.3f** |" % (
        label, f"{slots:,}", wdl0, wdl1, dep0, dep1, wdl0 + dep0, wdl1 + dep1)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    full = "--full" in sys.argv
    data = rows(sys.argv[1])
    if "--before" in sys.argv:
        earlier = OrderedDict()
        for path in sys.argv[sys.argv.index("--before") + 1:]:
            earlier.update(rows(path))
        data = OrderedDict(
            (name, (slots, earlier[name][2], wdl1, earlier[name][4], dep1))
            for name, (slots, _, wdl1, _, dep1) in data.items()
            if name in earlier)
    print("| sector | slots | WDL before | WDL after | depth before | depth after | total before | total after |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    groups = OrderedDict()
    totals = {"moving phase": [0, [0.0] * 4], "placement phase": [0, [0.0] * 4]}
    for name, (slots, *bits) in data.items():
        key = name if full else group(name)
        g = groups.setdefault(key, [0, [0.0] * 4])
        phase = "moving phase" if name.count("-") == 1 else "placement phase"
        for acc in (g, totals[phase]):
            acc[0] += slots
            acc[1] = [a + b * slots for a, b in zip(acc[1], bits)]
    for key, (slots, b) in groups.items():
        print(fmt(key.replace("moving ", ""), slots, b))
    all_slots = sum(t[0] for t in totals.values())
    all_bits = [sum(t[1][i] for t in totals.values()) for i in range(4)]
    for key, (slots, b) in totals.items():
        if slots:
            print(fmt("**%s**" % key, slots, b))
    if all_slots:
        print(fmt("**whole**", all_slots, all_bits))
        gb = lambda bits: bits / 8 / 1e9
        print()
        print("Whole, GB: WDL %.3f -> %.3f, depth %.3f -> %.3f, total %.3f -> %.3f"
              % (gb(all_bits[0]), gb(all_bits[1]), gb(all_bits[2]), gb(all_bits[3]),
                 gb(all_bits[0] + all_bits[2]), gb(all_bits[1] + all_bits[3])))


if __name__ == "__main__":
    main()
