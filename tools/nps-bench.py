#!/usr/bin/env python3
"""Time to depth and nodes per second from the start position, for any engine that
speaks UCI (millbase's `millbase uci`, Sanmill's `tgf uci`), one search per depth,
each in a fresh process (so no table carries over).

    tools/nps-bench.py --engine "target/release/millbase uci" --depths 1-9 \\
        [--option MoveTimeMs=0 ...] [--repeat 3] [--json]

For each depth: `uci`, the options (`setoption name N value V`), `isready`,
`position startpos`, `go depth D`; the search ends at the first line containing
`bestmove` (millbase: `bestmove X`; Sanmill's engine: `info depth D score S nodes N
bestmove X`, one line). Reported per depth, of the `--repeat` runs the one with
the least CPU time: wall time from `go` to that line, the engine's node count (the
last `nodes N` it printed), nodes per wall second, and the CPU time (user + system,
all threads) of the process less that of a process that only starts and quits
(the best of three): nodes per CPU second depend much less than wall time on what
else runs on the machine.
The two engines count differently: Sanmill's counts a removal as a ply of its own,
millbase's does not, so their depth D are not the same search.

Standard library only.
"""

import argparse
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import time

NODES = re.compile(r"\bnodes (\d+)")


def search(command, options, depth, timeout):
    """One search to `depth` in a fresh process: (wall s, nodes, cpu s, last line)."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def send(line):
        proc.stdin.write(line + "\n")
        proc.stdin.flush()

    def wait_for(word, deadline):
        seen = []
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("%s exited before '%s'" % (command[0], word))
            seen.append(line.strip())
            if word in line:
                return seen
        raise RuntimeError("%s: no '%s' within %d s" % (command[0], word, timeout))

    try:
        start = time.monotonic()
        send("uci")
        wait_for("uciok", start + timeout)
        for name, value in options:
            send("setoption name %s value %s" % (name, value))
        send("isready")
        wait_for("readyok", start + timeout)
        send("position startpos")
        go = time.monotonic()
        send("go depth %d" % depth)
        lines = wait_for("bestmove", go + timeout)
        wall = time.monotonic() - go
        send("quit")
        proc.stdin.close()
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    nodes = [int(m.group(1)) for line in lines for m in NODES.finditer(line)]
    return wall, nodes[-1] if nodes else None, lines[-1]


def cpu_seconds_of(command, options, depth, timeout):
    """The search as `search`, with the CPU time of its process (from the kernel's
    accounting of the reaped child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, nodes, last = search(command, options, depth, timeout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, nodes, cpu, last


def startup_cpu(command, options, timeout):
    """CPU seconds of a process that only starts, answers `isready` and quits: what
    each search's CPU time includes besides the search."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(command, input="uci\n%sisready\nquit\n" % "".join(
        "setoption name %s value %s\n" % o for o in options), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, text=True, timeout=timeout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    del proc
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def depths(text):
    lo, _, hi = text.partition("-")
    lo, hi = int(lo), int(hi or lo)
    if not 1 <= lo <= hi:
        raise argparse.ArgumentTypeError("write D or D1-D2 with 1 <= D1 <= D2")
    return range(lo, hi + 1)


def option(text):
    name, eq, value = text.partition("=")
    if not eq or not name.strip():
        raise argparse.ArgumentTypeError("write NAME=VALUE")
    return name.strip(), value.strip()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--engine", required=True, help="the engine's command line")
    p.add_argument("--depths", type=depths, default=depths("1-8"), help="D or D1-D2")
    p.add_argument("--option", type=option, action="append", default=[],
                   help="NAME=VALUE, sent as setoption (repeatable)")
    p.add_argument("--repeat", type=int, default=1, help="runs per depth (the best is kept)")
    p.add_argument("--timeout", type=int, default=600, help="seconds a search may take")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    command = shlex.split(args.engine)
    try:
        startup = min(startup_cpu(command, args.option, args.timeout)
                      for _ in range(max(3, args.repeat)))
    except (OSError, subprocess.SubprocessError) as e:
        sys.exit("error: %s: %s" % (args.engine, e))
    rows = []
    for d in args.depths:
        try:
            runs = [cpu_seconds_of(command, args.option, d, args.timeout)
                    for _ in range(args.repeat)]
        except (OSError, RuntimeError) as e:
            sys.exit("error: depth %d: %s" % (d, e))
        wall, nodes, cpu, last = min(runs, key=lambda r: r[2])
        cpu = max(cpu - startup, 0.0)
        rows.append({"depth": d, "wall_s": wall, "cpu_s": cpu, "nodes": nodes,
                     "nps_wall": nodes / wall if nodes and wall > 0 else None,
                     "nps_cpu": nodes / cpu if nodes and cpu > 0 else None,
                     "answer": last, "load": os.getloadavg()[0]})
        if not args.json:
            r = rows[-1]
            print("depth %2d: %8.3f s wall, %8.3f s cpu, %12s nodes, %10s nodes/s wall, "
                  "%10s nodes/s cpu, load %.1f" % (
                      d, wall, cpu, nodes, "%.0f" % r["nps_wall"] if r["nps_wall"] else "-",
                      "%.0f" % r["nps_cpu"] if r["nps_cpu"] else "-", r["load"]))
    if args.json:
        print(json.dumps({"engine": args.engine, "options": args.option,
                          "startup_cpu_s": startup, "rows": rows}))


if __name__ == "__main__":
    main()
