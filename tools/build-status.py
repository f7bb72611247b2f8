#!/usr/bin/env python3
"""Prints a Markdown table of what a database directory holds, from its manifest.json:
per subspace the slots, W/L/D per symmetry class, longest win and loss, bytes and bits
per position of the WDL and depth sections, and build seconds.

    tools/build-status.py [DB]
"""
import json
import sys

db = sys.argv[1] if len(sys.argv) > 1 else "db"
with open(f"{db}/manifest.json") as f:
    manifest = json.load(f)
rows = sorted(manifest["subspaces"], key=lambda e: tuple(map(int, e["name"].split("-"))))
print("| k-l | slots | classes | wins | losses | draws | longest win | longest loss | bytes | WDL bit/pos | depth bit/pos | build s |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
totals = [0, 0, 0, 0]
for e in rows:
    classes = e["wins"] + e["losses"] + e["draws"]
    totals[0] += e["size"]
    totals[1] += e["bytes"]
    totals[2] += e["wdl_bytes"]
    totals[3] += e["depth_bytes"]
    print(f"| {e['name']} | {e['size']:,} | {classes:,} | {e['wins']:,} | {e['losses']:,} | {e['draws']:,} "
          f"| {e['longest_win']} | {e['longest_loss']} | {e['bytes']:,} "
          f"| {e['wdl_bytes'] * 8 / e['size']:.3f} | {e['depth_bytes'] * 8 / e['size']:.3f} | {e['build_seconds']:.0f} |")
print(f"\n{len(rows)} subspaces, {totals[0]:,} slots, {totals[1]:,} bytes; "
      f"WDL {totals[2] * 8 / totals[0]:.3f} bit/pos, depth {totals[3] * 8 / totals[0]:.3f} bit/pos.")
