"""Probes per second through the Python package.

Usage: python python/bench.py DB K-L [N]

Draws N (default 200000) random moving-phase positions of subspace K-L (White to
move with K stones, Black with L) as FEN strings, then times on one thread
`tb.probe(fen)` once cold and once warm, and `tb.moves(fen)` on the first N/20.
"""

import random
import sys
import time

import millbase


def fen(white, black, k, l):
    board = "".join("O" if p in white else "@" if p in black else "*" for p in range(24))
    rings = "/".join(board[i:i + 8] for i in range(0, 24, 8))
    return f"{rings} w m s {k} 0 {l} 0 0 0 -1 -1 -1 -1 0 0 1"


def report(what, n, seconds):
    print(f"{what:<34} {n:9} in {seconds:7.3f} s: {n / seconds:10.0f} /s")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    db, pair = sys.argv[1], sys.argv[2]
    k, l = map(int, pair.split("-"))
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 200000
    rng = random.Random(1)
    fens = []
    for _ in range(n):
        points = rng.sample(range(24), k + l)
        fens.append(fen(set(points[:k]), set(points[k:]), k, l))
    tb = millbase.open(db)
    for what in ("tb.probe(fen), cold", "tb.probe(fen), warm"):
        start = time.perf_counter()
        for f in fens:
            tb.probe(f)
        report(what, n, time.perf_counter() - start)
    start = time.perf_counter()
    plies = sum(len(tb.moves(f)) for f in fens[:n // 20])
    report("tb.moves(fen), warm", n // 20, time.perf_counter() - start)
    print(f"({plies} plies valued)")


if __name__ == "__main__":
    main()
