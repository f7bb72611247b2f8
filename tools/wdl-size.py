#!/usr/bin/env python3
"""Bytes and bits per slot of a WDL-only directory, per phase, and of a derived copy.

    tools/wdl-size.py FULL_DIR [DERIVED_DIR]

FULL_DIR is a directory written by `millbase pack --wdl-only` (every sector's file
present); DERIVED_DIR a copy of it after `--derive` (some files left out). Slots
come from `millbase info` of each file of FULL_DIR (the binary: $MILLBASE, default
target/release/millbase); bits per slot count every slot of the phase, derived
sectors' too (they are still answered).
"""

import os
import re
import subprocess
import sys

MILLBASE = os.environ.get("MILLBASE", "target/release/millbase")


def slots(path):
    out = subprocess.run([MILLBASE, "info", path], capture_output=True, text=True, check=True)
    return int(re.search(r"index slots\s+(\d+)", out.stdout).group(1))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    full = sys.argv[1]
    derived = sys.argv[2] if len(sys.argv) == 3 else None
    totals = {}
    for name in sorted(os.listdir(full)):
        if not name.endswith(".mdb"):
            continue
        path = os.path.join(full, name)
        phase = "moving" if name[:-4].count("-") == 1 else "placement"
        t = totals.setdefault(phase, [0, 0, 0, 0])
        t[0] += slots(path)
        t[1] += os.path.getsize(path)
        if derived:
            kept = os.path.join(derived, name)
            if os.path.exists(kept):
                t[2] += os.path.getsize(kept)
            else:
                t[3] += 1
    totals["whole game"] = [sum(t[i] for t in list(totals.values())) for i in range(4)]
    print("| phase | slots | bytes | bit/slot | derived: bytes | bit/slot | sectors left out |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for phase, (n, b, d, left) in totals.items():
        tail = f"{d:,} | {8 * d / n:.4f} | {left}" if derived else "- | - | -"
        print(f"| {phase} | {n:,} | {b:,} | {8 * b / n:.4f} | {tail} |")


if __name__ == "__main__":
    main()
