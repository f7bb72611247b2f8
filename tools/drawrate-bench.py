#!/usr/bin/env python3
"""The draw-rate benchmark against perfect play, for any engine speaking UCI.

For each strength of the engine and each perfect player, plays a `millbase arena`
match and records the engine's results per colour with 95% Wilson intervals, its
blunders per game, and the first blunder of each lost game. Writes OUT.json and a
plot OUT.png (draw rate per colour and per strength, one panel per perfect player)
and prints the table.

  tools/drawrate-bench.py --engine "/path/to/tgf uci" --db DIR \\
      --strength "depth=3" --strength "depth=0,option.SkillLevel=30,option.MoveTimeMs=200" \\
      [--perfect perfect --perfect perfect:trap] [--openings first-placements] \\
      [--start FEN] [--games N] [--threads T] [--out bench] [--millbase PATH]

A strength is what goes between `uci:` and the command in an arena spec (see
docs/PROTOCOL.md); `--engine engine` (the word) benchmarks millbase's own engine,
a strength then being `depth=3,db=no` and the like. `--openings first-placements`
plays each of the 24 first placements with both colours (`--games` rounds of 48);
it needs a database covering the whole game. With a database of the endgames only,
give a moving-phase `--start` and `--openings random:K` (`--games` games).

The plot needs matplotlib (`pip install matplotlib`); without it the JSON and the
table are still written and the script says so.
"""
import argparse
import json
import subprocess
import sys
import time


def arena(args, strength, perfect):
    if args.engine == "engine":
        player = f"engine:{strength}"
    else:
        player = f"uci:{strength}:{args.engine}" if strength else f"uci:{args.engine}"
    command = [
        args.millbase, "arena", player, perfect, "--db", args.db,
        "--openings", args.openings, "--games", str(args.games),
        "--threads", str(args.threads), "--seed", str(args.seed), "--quiet", "--json",
    ]
    if args.start:
        command += ["--start", args.start]
    command += args.arena_arg
    started = time.time()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"error: {' '.join(command)}: {done.stderr.strip()}")
    summary = json.loads(done.stdout)
    summary["seconds"] = round(time.time() - started, 1)
    summary["command"] = command
    return summary


def row(strength, perfect, s):
    cols = {c["colour"]: c for c in s["by_colour"]}
    return {
        "strength": strength or "(default)",
        "perfect": perfect,
        "games": s["games"],
        "draw_rate": s["draw_rate"],
        "white": cols["white"]["draws"],
        "black": cols["black"]["draws"],
        "white_games": cols["white"]["games"],
        "black_games": cols["black"]["games"],
        "blunders_per_game": s["blunders_per_game_a"],
        "forfeits": s["forfeits"],
        "draws_claimed": s["draws_claimed"],
        "first_blunders": [
            {"game": l["game"], "colour": l["colour"], "opening": l["opening"],
             "ply": (l["first_blunder"] or {}).get("ply"),
             "fen": (l["first_blunder"] or {}).get("fen")}
            for l in s["lost_games"]
        ],
        "seconds": s["seconds"],
    }


def pct(rate):
    return "%5.1f%% [%5.1f, %5.1f]" % (100 * rate["rate"], 100 * rate["low"], 100 * rate["high"])


def table(rows):
    head = "%-44s %-15s %5s  %-22s  %-22s  %-22s %8s %4s" % (
        "strength", "against", "games", "draws (all)", "draws as White",
        "draws as Black", "blund/g", "forf")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append("%-44s %-15s %5d  %-22s  %-22s  %-22s %8.2f %4d" % (
            r["strength"][:44], r["perfect"], r["games"], pct(r["draw_rate"]),
            pct(r["white"]), pct(r["black"]), r["blunders_per_game"] or 0.0, r["forfeits"]))
    return "\n".join(lines)


def plot(rows, path, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no plot: matplotlib is missing (pip install matplotlib)", file=sys.stderr)
        return False
    perfects = list(dict.fromkeys(r["perfect"] for r in rows))
    strengths = list(dict.fromkeys(r["strength"] for r in rows))
    fig, axes = plt.subplots(1, len(perfects), figsize=(4 + 3.5 * len(perfects), 4.8),
                             sharey=True, squeeze=False)
    for ax, perfect in zip(axes[0], perfects):
        for k, (colour, mark) in enumerate([("white", "o"), ("black", "s")]):
            xs, ys, lo, hi = [], [], [], []
            for i, strength in enumerate(strengths):
                r = next((r for r in rows if r["strength"] == strength and r["perfect"] == perfect), None)
                if r is None:
                    continue
                rate = r[colour]
                xs.append(i + (k - 0.5) * 0.15)
                ys.append(100 * rate["rate"])
                lo.append(100 * (rate["rate"] - rate["low"]))
                hi.append(100 * (rate["high"] - rate["rate"]))
            ax.errorbar(xs, ys, yerr=[lo, hi], fmt=mark, capsize=4,
                        label=f"engine as {colour.capitalize()}")
        ax.set_xticks(range(len(strengths)))
        ax.set_xticklabels([s if len(s) < 22 else s[:20] + "…" for s in strengths],
                           rotation=20, ha="right", fontsize=8)
        ax.set_title(f"against {perfect}")
        ax.set_ylim(-2, 102)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("draw rate against perfect play (%, 95% Wilson)")
    axes[0][0].legend(loc="lower right", fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--engine", required=True,
                   help="the engine's command line (split at whitespace), or 'engine' for millbase's")
    p.add_argument("--db", required=True, help="database directory")
    p.add_argument("--strength", action="append", default=[],
                   help="uci: parameters of one strength (repeatable), e.g. depth=3")
    p.add_argument("--perfect", action="append", default=[],
                   help="perfect, perfect:strict or perfect:trap (repeatable; default perfect)")
    p.add_argument("--openings", default="first-placements")
    p.add_argument("--start", help="start position (FEN) for random:K openings")
    p.add_argument("--games", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="drawrate")
    p.add_argument("--millbase", default="target/release/millbase")
    p.add_argument("--arena-arg", action="append", default=[],
                   help="one more argument for every arena run (repeatable)")
    args = p.parse_args()
    strengths = args.strength or [""]
    perfects = args.perfect or ["perfect"]
    rows, runs = [], []
    for strength in strengths:
        for perfect in perfects:
            s = arena(args, strength, perfect)
            runs.append(s)
            rows.append(row(strength, perfect, s))
            print(f"{strength or '(default)'} vs {perfect}: {s['games']} games, "
                  f"draws {pct(s['draw_rate'])}, {s['seconds']} s", file=sys.stderr)
    with open(args.out + ".json", "w") as f:
        json.dump({"engine": args.engine, "db": args.db, "openings": args.openings,
                   "start": args.start, "rows": rows, "summaries": runs}, f, indent=1)
    print(table(rows))
    title = f"{args.engine} against perfect play ({args.openings})"
    made = plot(rows, args.out + ".png", title)
    print(f"wrote {args.out}.json" + (f" and {args.out}.png" if made else ""))


if __name__ == "__main__":
    main()
