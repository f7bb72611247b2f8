#!/usr/bin/env python3
"""Engine matches on top of `millbase arena`: score, draw rate and W/D/L per colour
with 95% intervals, and a sequential probability ratio test (SPRT).

    tools/match.py ab A B [options]              (a) any two players, e.g. old vs new
    tools/match.py sanmill --movetime MS [options]    (b) millbase's engine vs Sanmill's
    tools/match.py perfect ENGINE --db DIR [options]  (c) ENGINE vs perfect play from
                                                     every first placement, both colours
    tools/match.py report GAMES.jsonl [options]  the same report from saved games

Players are the arena's specs (`millbase arena --help`): `engine:movetime=100,db=no`,
`engine:depth=4,eval=tuned`, `uci:movetime=100:/path/to/old/millbase uci` (another
binary), `perfect`. Game k of a match is game k of one `millbase arena` run over the
whole match (same openings, same seeds), played in an arena run of its own
(`--only-game k`), so that a match is resumable: with `--log FILE` every finished game
is appended to FILE (JSON lines) at once, and the same command run again plays only
the games the log lacks, then reports over all of them (a log only continues the match
it was started for: same players, openings, seed, start and databases). Both games of
a pair (2k, 2k+1) start from the same position with colours swapped; A is White in
even games. After each game the statistics are recomputed and, with `--sprt ELO0
ELO1`, the match stops once the test's log-likelihood ratio leaves
(log(beta/(1-alpha)), log((1-beta)/alpha)).

Statistics (for player A):
- score = (wins + draws/2) / games, with the pentanomial 95% interval: each pair of
  games scores 0, 1/4, 1/2, 3/4 or 1 per game; mean +- 1.96 * sd / sqrt(pairs);
  Elo = -400 log10(1/score - 1) at the score and at both ends of its interval;
- draw rate, and A's W/D/L as White and as Black, each a proportion with its 95%
  Wilson interval;
- SPRT (elo0, elo1 logistic): the normal approximation of the generalised SPRT on
  pair scores, LLR = pairs * (s1 - s0) * (2 m - s0 - s1) / (2 v), with m and v the mean
  and variance of the pair scores (v at least 0.01, so that a handful of identical
  pairs does not decide at once), s = 1 / (1 + 10^(-elo/400)).

Standard library only (python3 >= 3.9).
"""

import argparse
import hashlib
import concurrent.futures
import json
import math
import os
import subprocess
import sys
import tempfile
import time

Z95 = 1.959964
VARIANCE_FLOOR = 0.01


def wilson(count, total):
    """A proportion with its 95% Wilson score interval: (rate, low, high)."""
    if total == 0:
        return (0.0, 0.0, 1.0)
    n, p, z = float(total), count / total, Z95
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (p, max(0.0, centre - half), min(1.0, centre + half))


def elo(score):
    """Logistic Elo difference of an expected score (+-inf at 1 and 0)."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1)


def finite(x):
    """x, or None if it is infinite."""
    return x if math.isfinite(x) else None


def expected(elo_diff):
    """Expected score of a logistic Elo difference."""
    return 1 / (1 + 10 ** (-elo_diff / 400))


def game_score(record):
    """A's score in one game: 1, 1/2 or 0."""
    return {"A": 1.0, None: 0.5, "B": 0.0}[record["winner"]]


def pairs_of(records):
    """Games 2k and 2k+1 (same opening, swapped colours) as pairs; a record without
    its partner is left out of the pair statistics. (Logs of the harness's batch
    days number games within a batch.)"""
    by_key = {}
    for r in records:
        by_key.setdefault((r.get("batch", 0), r["game"] // 2), []).append(r)
    out = []
    for games in by_key.values():
        if len(games) == 2 and {g["white"] for g in games} == {"A", "B"}:
            out.append((game_score(games[0]) + game_score(games[1])) / 2)
    return out


def sprt(pair_scores, elo0, elo1, alpha, beta):
    """The SPRT's state after these pair scores: llr, bounds and decision."""
    lower, upper = math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)
    n = len(pair_scores)
    llr = 0.0
    if n > 0:
        m = sum(pair_scores) / n
        v = max(sum((x - m) ** 2 for x in pair_scores) / n, VARIANCE_FLOOR)
        s0, s1 = expected(elo0), expected(elo1)
        llr = n * (s1 - s0) * (2 * m - s0 - s1) / (2 * v)
    decision = "H1 (elo >= %g)" % elo1 if llr >= upper else (
        "H0 (elo <= %g)" % elo0 if llr <= lower else None)
    return {"elo0": elo0, "elo1": elo1, "alpha": alpha, "beta": beta,
            "llr": llr, "lower": lower, "upper": upper, "decision": decision}


def builds_of(records):
    """Games per millbase build (records of the batch days have none)."""
    out = {}
    for r in records:
        out[r.get("build", "unknown")] = out.get(r.get("build", "unknown"), 0) + 1
    return out


def summarize(records, sprt_args=None):
    """Every figure of the report, from the arena's game records."""
    games = len(records)
    wins = sum(1 for r in records if r["winner"] == "A")
    losses = sum(1 for r in records if r["winner"] == "B")
    draws = games - wins - losses
    pair_scores = pairs_of(records)
    pentanomial = [sum(1 for x in pair_scores if abs(x - k / 4) < 1e-9) for k in range(5)]
    n = len(pair_scores)
    if n > 0:
        mean = sum(pair_scores) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in pair_scores) / n)
        half = Z95 * sd / math.sqrt(n)
        score = {"score": mean, "low": max(0.0, mean - half), "high": min(1.0, mean + half)}
    else:
        score = {"score": (wins + draws / 2) / games if games else 0.0, "low": 0.0, "high": 1.0}
    # Elo at a score of 0 or 1 is infinite: JSON has no such number, so it is null.
    score["elo"], score["elo_low"], score["elo_high"] = (
        finite(elo(score["score"])), finite(elo(score["low"])), finite(elo(score["high"])))
    colours = {}
    for colour, side in (("white", "A"), ("black", "B")):
        mine = [r for r in records if r["white"] == side]
        w = sum(1 for r in mine if r["winner"] == "A")
        l = sum(1 for r in mine if r["winner"] == "B")
        d = len(mine) - w - l
        colours[colour] = {"games": len(mine), "wins": w, "draws": d, "losses": l,
                           "win_rate": wilson(w, len(mine)),
                           "draw_rate": wilson(d, len(mine)),
                           "loss_rate": wilson(l, len(mine))}
    out = {"a": records[0]["a"] if records else None,
           "b": records[0]["b"] if records else None,
           "games": games, "wins": wins, "draws": draws, "losses": losses,
           "pairs": n, "pentanomial": pentanomial, "score": score,
           "draw_rate": wilson(draws, games), "by_colour": colours,
           "builds": builds_of(records)}
    if sprt_args is not None:
        out["sprt"] = sprt(pair_scores, *sprt_args)
    return out


def pct(x):
    return "%5.1f%%" % (100 * x)


def elo_text(e, score):
    if e is None:
        return "+inf" if score >= 1 else "-inf"
    return "%+.0f" % e


def rate_text(r):
    return "%s [%s, %s]" % (pct(r[0]), pct(r[1]), pct(r[2]))


def report_text(s):
    """The summary as text."""
    sc = s["score"]
    lines = [
        "A = %s, B = %s: %d games (%d pairs)" % (s["a"], s["b"], s["games"], s["pairs"]),
        "  A: W/D/L %d/%d/%d, score %s [%s, %s] (pentanomial 95%%), Elo %s [%s, %s]"
        % (s["wins"], s["draws"], s["losses"], pct(sc["score"]), pct(sc["low"]),
           pct(sc["high"]), elo_text(sc["elo"], sc["score"]),
           elo_text(sc["elo_low"], sc["low"]), elo_text(sc["elo_high"], sc["high"])),
        "  pairs scoring 0, 1/4, 1/2, 3/4, 1: %s" % " ".join(map(str, s["pentanomial"])),
        "  draw rate %s (Wilson 95%%)" % rate_text(s["draw_rate"]),
    ]
    for colour in ("white", "black"):
        c = s["by_colour"][colour]
        lines.append("  A as %-5s: %3d games, W/D/L %d/%d/%d; wins %s, draws %s, losses %s"
                     % (colour, c["games"], c["wins"], c["draws"], c["losses"],
                        rate_text(c["win_rate"]), rate_text(c["draw_rate"]),
                        rate_text(c["loss_rate"])))
    if len(s["builds"]) > 1:
        lines.append("  played by %d millbase builds: %s" % (len(s["builds"]), ", ".join(
            "%s (%d games)" % kv for kv in sorted(s["builds"].items()))))
    t = s.get("sprt")
    if t:
        lines.append("  SPRT elo0=%g elo1=%g alpha=%g beta=%g: LLR %.3f in (%.3f, %.3f): %s"
                     % (t["elo0"], t["elo1"], t["alpha"], t["beta"], t["llr"], t["lower"],
                        t["upper"], t["decision"] or "undecided"))
    return "\n".join(lines) + "\n"


def arena_command(args, a, b, game, out):
    """The arena run that plays game number `game` of the match, and only it: the
    arena computes the openings and seeds of the whole run, so the game is the one a
    single run of all games would play."""
    if args.openings == "first-placements":
        # --games counts rounds here; a round has at least two games.
        size = game // 2 + 1
    else:
        size = game + 1
    cmd = [args.millbase, "arena", a, b, "--games", str(size), "--openings", args.openings,
           "--seed", str(args.seed), "--only-game", str(game), "--quiet", "--json",
           "--out", out]
    if args.start:
        cmd += ["--start", args.start]
    if args.db:
        cmd += ["--db", args.db]
    return cmd


def setup_of(args, a, b):
    """What makes two runs the same match: a log only continues its own match."""
    return {"a": a, "b": b, "openings": args.openings, "seed": args.seed,
            "start": args.start, "db": args.db}


def load_log(path, setup):
    """The games already in a log, by game number; a line cut off by an interrupted
    write is dropped (and the file cut back to its last whole line)."""
    if not os.path.exists(path):
        return {}
    with open(path, "rb") as f:
        data = f.read()
    whole = data[: data.rfind(b"\n") + 1]
    if len(whole) < len(data):
        sys.stderr.write("%s: dropping an unfinished last line\n" % path)
        with open(path, "wb") as f:
            f.write(whole)
    done = {}
    for number, line in enumerate(whole.decode().splitlines(), 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except ValueError as e:
            sys.exit("error: %s line %d: %s" % (path, number, e))
        if r.get("setup") != setup:
            sys.exit("error: %s holds games of another match (%s); use another --log"
                     % (path, json.dumps(r.get("setup"))))
        done[r["game"]] = r
    return done


def append_log(path, record):
    """Appends one game to the log and makes it durable before the next starts."""
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())


def build_of(path):
    """The first 12 hex digits of the SHA-256 of the millbase binary: each game records
    the build that played it, and the report says when a log mixes builds."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:12]


def play_one(args, a, b, game, tmp):
    """Plays game `game` in its own arena run; returns its record."""
    out = os.path.join(tmp, "game%d.jsonl" % game)
    started = time.monotonic()
    run = subprocess.run(arena_command(args, a, b, game, out), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        why = run.stderr.strip().splitlines()
        why = why[-1].removeprefix("error: ") if why else "exit %d" % run.returncode
        raise RuntimeError("the arena failed: %s" % why)
    with open(out) as f:
        records = [json.loads(line) for line in f if line.strip()]
    os.remove(out)
    if len(records) != 1 or records[0]["game"] != game:
        raise RuntimeError("the arena played %d games for game %d" % (len(records), game))
    r = records[0]
    r["build"] = args.build
    r["seconds"] = round(time.monotonic() - started, 2)
    r["load"] = [round(x, 2) for x in os.getloadavg()]
    return r


def play(args, a, b):
    """Plays the match's missing games, `--threads` at a time, appending each finished
    game to the log; stops early once the SPRT decides. Returns every record."""
    total = args.games + args.games % 2
    setup = setup_of(args, a, b)
    done = load_log(args.log, setup) if args.log else {}
    todo = [g for g in range(total) if g not in done]
    sprt_args = tuple(args.sprt) + (args.alpha, args.beta) if args.sprt else None
    if args.dry_run:
        print(" ".join(quote(c) for c in arena_command(args, a, b, todo[0] if todo else 0,
                                                        "GAME.jsonl")))
        return []
    args.build = build_of(args.millbase)
    if done and not args.json:
        sys.stderr.write("%s: %d games played, %d to go\n" % (args.log, len(done), len(todo)))

    def decided():
        return sprt_args and summarize(list(done.values()), sprt_args)["sprt"]["decision"]

    with tempfile.TemporaryDirectory(prefix="millbase-match-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=args.threads) as pool:
        pending = {}
        queue = iter(todo)
        stop = decided()
        try:
            while not stop:
                while len(pending) < args.threads:
                    game = next(queue, None)
                    if game is None:
                        break
                    pending[pool.submit(play_one, args, a, b, game, tmp)] = game
                if not pending:
                    break
                finished, _ = concurrent.futures.wait(
                    pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in finished:
                    del pending[future]
                    try:
                        r = future.result()
                    except RuntimeError as e:
                        for other in pending:
                            other.cancel()
                        sys.exit("error: %s" % e)
                    r["setup"] = setup
                    done[r["game"]] = r
                    if args.log:
                        append_log(args.log, r)
                    if not args.json:
                        progress(r, summarize(list(done.values()), sprt_args), sprt_args)
                stop = decided()
            for future in concurrent.futures.as_completed(list(pending)):
                try:
                    r = future.result()
                except RuntimeError as e:
                    sys.exit("error: %s" % e)
                r["setup"] = setup
                done[r["game"]] = r
                if args.log:
                    append_log(args.log, r)
        except KeyboardInterrupt:
            for other in pending:
                other.cancel()
            sys.exit("interrupted: %d games%s; the same command continues"
                     % (len(done), " in " + args.log if args.log else ""))
    return [done[g] for g in sorted(done)]


def progress(r, s, sprt_args):
    """One line per finished game, on stderr."""
    winner = {"A": "A wins", "B": "B wins", None: "draw"}[r["winner"]]
    sys.stderr.write("game %d (A %s): %s, %s, %d plies, %.0f s; after %d games: score %s, "
                     "draws %s%s\n" % (
                         r["game"], "White" if r["white"] == "A" else "Black", winner,
                         r["reason"], r["plies"], r.get("seconds", 0), s["games"],
                         pct(s["score"]["score"]), pct(s["draw_rate"][0]),
                         (", LLR %.2f" % s["sprt"]["llr"]) if sprt_args else ""))


def quote(word):
    return word if word and all(c.isalnum() or c in "-_./:=,+" for c in word) else "'%s'" % word


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=["ab", "sanmill", "perfect", "report"])
    p.add_argument("players", nargs="*", help="ab: A B; perfect: ENGINE; report: GAMES.jsonl")
    p.add_argument("--millbase", default=os.environ.get("MILLBASE", "target/release/millbase"),
                   help="the millbase binary whose arena plays (default target/release/millbase)")
    p.add_argument("--db", help="database directory (perfect play, blunder checks)")
    p.add_argument("--games", type=int, default=100,
                   help="games 0 to GAMES-1 of the match (rounded up to a whole pair)")
    p.add_argument("--openings", default=None,
                   help="the arena's --openings (ab: default random:4; sanmill and perfect: "
                        "first-placements: game 2k and 2k+1 from first placement k mod 24)")
    p.add_argument("--start", help="the arena's --start")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1,
                   help="games at once (each in its own arena run)")
    p.add_argument("--movetime", type=int, help="sanmill: ms per move for both engines")
    p.add_argument("--engine", default="db=no",
                   help="sanmill: millbase engine parameters besides movetime (default db=no)")
    p.add_argument("--tgf", default="/tmp/sanmill/target/release/tgf",
                   help="sanmill: Sanmill's engine binary")
    p.add_argument("--skill", type=int, default=30, help="sanmill: Sanmill's SkillLevel")
    p.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"))
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--beta", type=float, default=0.05)
    p.add_argument("--log", help="append every finished game (a JSON line) here; rerunning the "
                   "same command with the same log plays only the games it lacks")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--dry-run", action="store_true",
                   help="print the arena command of the next game only")
    args = p.parse_args(argv)

    if args.games < 1 or args.threads < 1:
        p.error("--games and --threads must be at least 1")
    if args.sprt and not (args.sprt[0] < args.sprt[1] and 0 < args.alpha < 1 and 0 < args.beta < 1):
        p.error("--sprt ELO0 ELO1 needs ELO0 < ELO1 and alpha, beta in (0, 1)")
    need = {"ab": 2, "sanmill": 0, "perfect": 1, "report": 1}[args.mode]
    if len(args.players) != need:
        p.error("%s takes %d argument(s), got %d" % (args.mode, need, len(args.players)))
    sprt_args = tuple(args.sprt) + (args.alpha, args.beta) if args.sprt else None

    if args.mode == "report":
        try:
            with open(args.players[0]) as f:
                records = [json.loads(line) for line in f if line.strip()]
        except (OSError, ValueError) as e:
            sys.exit("error: %s: %s" % (args.players[0], e))
    else:
        if args.mode == "ab":
            a, b = args.players
        elif args.mode == "sanmill":
            if not args.movetime or args.movetime < 1:
                p.error("sanmill needs --movetime MS")
            a = "engine:movetime=%d%s" % (args.movetime, "," + args.engine if args.engine else "")
            b = "uci:depth=0,option.SkillLevel=%d,option.MoveTimeMs=%d:%s uci" % (
                args.skill, args.movetime, args.tgf)
        else:
            a, b = args.players[0], "perfect"
            if not args.db:
                p.error("perfect needs --db DIR (with the placement sectors)")
            if args.sprt:
                p.error("perfect: no SPRT (it measures a draw rate, not an Elo difference)")
        if args.openings is None:
            args.openings = "random:4" if args.mode == "ab" else "first-placements"
        if not args.dry_run and not os.access(args.millbase, os.X_OK):
            sys.exit("error: %s is not an executable (--millbase or MILLBASE)" % args.millbase)
        records = play(args, a, b)
        if args.dry_run:
            return
    if not records:
        sys.exit("error: no games")
    s = summarize(records, sprt_args)
    print(json.dumps(s, allow_nan=False) if args.json else report_text(s), end="\n" if args.json else "")


if __name__ == "__main__":
    main()
