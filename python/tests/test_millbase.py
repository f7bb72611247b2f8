"""The Python package against the `millbase` program: on the whole 4-stone game,
built here, every value and every ply's value from `millbase.open(...).probe/moves/
best` must equal `millbase analyze --json` (and `probe --json`), on positions of both
phases from random games; bad input must raise the right exception with the
program's own error message.

The program is `$MILLBASE_BIN`, or `target/ci/millbase` or `target/release/millbase`
in the repository (`cargo test --profile ci` or `cargo build --release` makes it).
"""

import json
import os
import random
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import millbase

REPO = Path(__file__).resolve().parents[2]


def program():
    given = os.environ.get("MILLBASE_BIN")
    candidates = [Path(given)] if given else [
        REPO / "target" / "ci" / "millbase",
        REPO / "target" / "release" / "millbase",
    ]
    for path in candidates:
        if path.is_file():
            return path
    pytest.fail(f"no millbase program at {[str(c) for c in candidates]}: "
                "run `cargo build --release` or set MILLBASE_BIN")


def cli(command, db, position):
    """The program's answer: its JSON without "source", or {"error": message}."""
    out = subprocess.run(
        [program(), command, "--json", "--table-mib", "1", "--db", db, position],
        capture_output=True, text=True)
    if out.returncode == 0:
        answer = json.loads(out.stdout)
        del answer["source"]
        return answer
    line = out.stderr.strip()
    assert line.startswith("error: "), line
    return {"error": line[len("error: "):]}


def as_json(value):
    """A Value as the program writes it."""
    out = {"value": value.wdl}
    if value.distance is not None:
        out["distance"] = value.distance
    return out


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("g4")
    subprocess.run([program(), "build", "--rules", "standard-4", "--quiet", "--db", path],
                   check=True, capture_output=True)
    return path


@pytest.fixture(scope="module")
def tb(db):
    return millbase.open(db)


def random_positions(tb, games=12, seed=2024):
    """Positions of random games as `startpos moves ...` with their phase, sampled
    along the way, with the position after a mill-closing ply whose removal is still
    to come ("removal")."""
    rng = random.Random(seed)
    out = [("startpos", "placement")]

    def text(plies):
        return " ".join(["startpos", "moves"] + plies)

    def phase(plies):
        # Both sides place four stones (a ply without '-'): eight placements.
        return "placement" if sum("-" not in p for p in plies) < 8 else "moving"

    for _ in range(games):
        plies = []
        while len(plies) < 60:
            moves = tb.moves(text(plies))
            if not moves:
                break
            ply = rng.choice(moves).ply
            if "x" in ply[1:]:
                out.append((text(plies + [ply.split("x")[0]]), "removal"))
            plies.append(ply)
            if rng.random() < 0.3:
                out.append((text(plies), phase(plies)))
        out.append((text(plies), phase(plies)))
    return out


FENS = [
    "O*O*O*O*/@*@*@*@*/******** w m s 4 0 4 0 0 0 -1 -1 -1 -1 0 0 1",
    "********/@*@*****/OO*****O w p r 3 1 2 2 1 0 -1 -1 -1 -1 0 0 3",
]

BAD = [
    "not a fen",
    "startpos moves a7 a7",
    "startpos moves a8",
    "startpos extra",
    "OOO*****/@@******/******** w m s 3 0 2 0 0 0 -1 -1 -1 -1 0 0 1",
]


def test_the_module_is_the_abi3_extension():
    assert millbase.__version__
    assert issubclass(millbase.MissingError, millbase.DatabaseError)
    assert issubclass(millbase.DamagedError, millbase.DatabaseError)
    assert issubclass(millbase.PositionError, millbase.Error)
    package = Path(millbase.__file__).parent
    assert [p.name for p in package.glob("*.so")] == ["millbase.abi3.so"]


def test_values_and_plies_equal_the_cli(tb, db):
    lines = random_positions(tb) + [(fen, "fen") for fen in FENS]
    kinds = [kind for _, kind in lines]
    assert min(kinds.count(k) for k in ("placement", "moving", "removal")) >= 5, kinds
    for i, (line, _) in enumerate(lines):
        expected = cli("analyze", db, line)
        assert "error" not in expected, (line, expected)
        value = tb.probe(line)
        moves = tb.moves(line)
        assert as_json(value) == {k: v for k, v in expected.items() if k != "moves"}, line
        assert [dict(ply=m.ply, **as_json(m.value)) for m in moves] == expected["moves"], line
        best = tb.best(line)
        assert best == (moves[0] if moves else None), line
        if not moves:
            assert as_json(value) == {"value": "loss", "distance": 0}, line
        if i % 5 == 0:
            assert as_json(value) == cli("probe", db, line), line


@pytest.mark.parametrize("line", BAD)
def test_bad_positions_raise_position_error_with_the_cli_message(tb, db, line):
    with pytest.raises(millbase.PositionError) as err:
        tb.probe(line)
    assert str(err.value) == cli("analyze", db, line)["error"]
    with pytest.raises(millbase.PositionError):
        tb.moves(line)
    with pytest.raises(millbase.PositionError):
        tb.best(line)


def test_a_missing_directory_raises_missing_error(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(millbase.MissingError) as err:
        millbase.open(missing)
    assert str(err.value) == cli("probe", missing, "startpos")["error"]
    assert "no database directory" in str(err.value)


def test_a_missing_file_raises_missing_error_naming_it(tmp_path, db):
    shutil.copytree(db, tmp_path / "part")
    (tmp_path / "part" / "4-4.mdb").unlink()
    tb = millbase.open(tmp_path / "part")
    with pytest.raises(millbase.MissingError) as err:
        tb.probe(FENS[0])
    assert "no database for subspace 4-4" in str(err.value)
    assert str(err.value) == cli("probe", tmp_path / "part", FENS[0])["error"]


def test_a_damaged_file_raises_damaged_error(tmp_path, db):
    shutil.copytree(db, tmp_path / "bad")
    path = tmp_path / "bad" / "4-4.mdb"
    path.write_bytes(path.read_bytes()[:100])
    tb = millbase.open(tmp_path / "bad")
    with pytest.raises(millbase.DamagedError) as err:
        tb.probe(FENS[0])
    assert str(err.value) == cli("probe", tmp_path / "bad", FENS[0])["error"]


def test_threads_share_one_tablebase(tb):
    lines = [line for line, _ in random_positions(tb, games=4, seed=7)]
    expected = [tb.probe(line) for line in lines]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for _ in range(5):
            assert list(pool.map(tb.probe, lines)) == expected


def test_values_and_moves_read_well(tb, db):
    v = tb.probe("startpos")
    assert (v.wdl, v.distance) == ("draw", None)
    assert repr(v) == "Value('draw', None)" and str(v) == "draw"
    assert hash(v) == hash(tb.probe("startpos"))
    m = tb.best("startpos")
    assert repr(m) == f"Move('{m.ply}', Value('draw', None))"
    assert tb.rules == "standard-4"
    assert Path(tb.path) == Path(db)
