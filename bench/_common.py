"""What the benchmark scripts of ``bench/`` share.

Every script imports this module as ``_common``: Python puts the directory
of the script it runs (``bench/``) first on ``sys.path``, so no script
changes ``sys.path``. The module imports the standard library only at its
top (numpy, scikit-learn and the package load where a function needs them),
so that a script's child processes, which measure memory, and the peer
script run in another environment stay as they were.

- paths: the repository, its ``docs/``, and the rent data of
  ``../shared/data``;
- the environment a page records: versions, date, commit, load average;
- timing: one call, the median of repeated calls, CPU and wall time;
- tables: aligned text for the terminal, RST list-tables for the pages,
  and writing a page (a quick run prints it instead);
- quick mode: which optional peers are missing, said once;
- the workloads a script shares with another, or that it describes for
  itself (Q1-Q5 of ``bench_recursive.py``, whose Q1-Q4 are also tables of
  the field benchmark, ``_field_tables.py``; the wide classification of
  ``bench_calibration.py``, also a field table; W1-W2 of
  ``bench_permutation.py`` and ``bench_kernel_calls.py``, D1-D2 and
  rfpimp's forests of ``bench_dependence.py`` and
  ``dependence_stability_screen.py``), so that no script imports another.
"""

import datetime
import importlib
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DOCS = ROOT / "docs"
#: The New York rental listings (bathrooms, bedrooms, price, longitude,
#: latitude, interest_level), next to the repository, not in it.
RENT_CSV = ROOT.parent / "shared" / "data" / "rent.csv"


def shown(path):
    """``path`` relative to the repository root when it is inside it."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


# --------------------------------------------------------------------------
# environment

#: Names whose version is read from the imported module (the code that runs,
#: even where the installed distribution's metadata says otherwise).
_MODULES = {
    "numpy": "numpy",
    "scipy": "scipy",
    "scikit-learn": "sklearn",
    "pandas": "pandas",
    "sklearn_fimp": "sklearn_fimp",
    "xgboost": "xgboost",
    "lightgbm": "lightgbm",
    "catboost": "catboost",
}


def distribution_version(name):
    """The installed distribution's version, None when it is not installed."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def version(name):
    """The version of a library, ``"not installed"`` when it is missing."""
    if name in _MODULES:
        try:
            return importlib.import_module(_MODULES[name]).__version__
        except ImportError:
            return "not installed"
    return distribution_version(name) or "not installed"


def versions(*names, python=True, installed_only=False):
    """``"Python 3.11.7, numpy 2.4.6, ..."``: Python's version, then each
    name's in the order given (leaving out missing ones with
    ``installed_only``)."""
    parts = [f"Python {platform.python_version()}"] if python else []
    for name in names:
        found = version(name)
        if not (installed_only and found == "not installed"):
            parts.append(f"{name} {found}")
    return ", ".join(parts)


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc)


def utc_stamp():
    """The date line's time: ``2026-11-23 20:37 UTC``."""
    return f"{utc_now():%Y-%m-%d %H:%M} UTC"


def git_commit(*paths, changed=None):
    """The short commit of the repository's HEAD ("unknown" outside git).
    With ``changed`` (a text such as ``"+ local changes"``), followed by it
    when the work tree differs from HEAD: in tracked files, or, under
    ``paths`` when given, in any file."""

    def git(*args):
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
        if changed is None:
            return commit
        if paths:
            differs = git("status", "--porcelain", "--", *paths)
        else:
            differs = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{commit} {changed}" if differs else commit


def load_average():
    """The 1, 5 and 15-minute load averages as text (other processes share
    the machine's cores and slow the times down)."""
    if not hasattr(os, "getloadavg"):
        return "not available on this platform"
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def command_line(script, argv, *, pythonpath=False, environment=()):
    """The command that reproduces a run, as a page shows it:
    ``[VAR=value ...] [PYTHONPATH=. ]python bench/SCRIPT ARGS``, with the
    variables of ``environment`` that are set."""
    words = [f"{name}={os.environ[name]}" for name in environment if name in os.environ]
    words += ["PYTHONPATH=."] if pythonpath else []
    words += ["python", f"bench/{script}"]
    return " ".join(words) + (" " + shlex.join(argv) if argv else "")


# --------------------------------------------------------------------------
# timing


def timed(function):
    """(wall seconds, result) of one call."""
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def cpu_timed(function):
    """(process CPU seconds, wall seconds, result) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = function()
    return time.process_time() - cpu, time.perf_counter() - wall, result


def median_time(function, repeats):
    """Median wall time of ``repeats`` calls, and the last call's result."""
    times, result = [], None
    for _ in range(repeats):
        seconds, result = timed(function)
        times.append(seconds)
    return statistics.median(times), result


# --------------------------------------------------------------------------
# tables and pages


def _number(cell):
    try:
        float(cell.rstrip("%xs ").replace(",", ""))
    except ValueError:
        return False
    return True


def text_table(header, rows):
    """Rows of cells as aligned text for the terminal: a header, a rule, and
    the columns whose cells are all numbers aligned to the right."""
    cells = [[str(cell) for cell in row] for row in [header, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    right = [
        len(cells) > 1
        and all(_number(row[i]) or row[i] in ("", "-") for row in cells[1:])
        for i in range(len(header))
    ]

    def line(row):
        return "  ".join(
            cell.rjust(width) if align else cell.ljust(width)
            for cell, width, align in zip(row, widths, right)
        ).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join([line(cells[0]), rule, *map(line, cells[1:])])


def list_table(title, header, rows):
    """An RST list-table (its lines): ``title`` (None for none), a header
    row and the body rows, each cell's text as given (see
    :func:`rst_cell`)."""
    lines = [
        ".. list-table::" + (f" {title}" if title else ""),
        "   :header-rows: 1",
        "",
    ]
    for row in [header, *rows]:
        lines += [
            ("   * - " if i == 0 else "     - ") + rst_cell(cell)
            for i, cell in enumerate(row)
        ]
    return lines


def rst_cell(cell):
    """A list-table cell's text: as given, but a cell that RST would read as
    a bullet list (a lone "-", "*" or "+", or one followed by a space, as
    the "-" of a missing value) has its marker escaped, so that the page
    shows the character and not a bullet."""
    text = str(cell)
    if text in ("-", "*", "+") or text[:2] in ("- ", "* ", "+ "):
        return "\\" + text
    return text


def heading(text, underline="="):
    """A section title and its underline."""
    return [text, underline * len(text)]


def written_by(script):
    """The first lines of a page: which script writes it."""
    return [f".. This file is written by bench/{script}; do not edit it.", ""]


def reproduce(command):
    """The lines that give the command reproducing a page."""
    return ["Reproduce from the repository root with::", "", f"    {command}", ""]


def write_page(path, text, quick=False):
    """Write a page of ``docs/`` (or a log's summary); a quick run prints it
    instead, so that it never changes what the repository holds."""
    if quick:
        print(f"\n--quick: {shown(path)} is not written; it would read:\n")
        print(text)
        return
    Path(path).write_text(text, encoding="utf-8")
    print(f"wrote {shown(path)}")


# --------------------------------------------------------------------------
# quick mode: optional peers


def missing(module):
    """Why ``module`` cannot be used (None when it imports): an optional
    peer is skipped, with this said, never a failure."""
    try:
        importlib.import_module(module)
    except Exception as exc:  # ImportError, or a peer failing at import time
        return f"{module} cannot be imported ({type(exc).__name__}: {exc})"
    return None


def skip(what, why):
    """Say that ``what`` is skipped, and why."""
    print(f"skipped {what}: {why}", file=sys.stderr, flush=True)


def rent_missing(path):
    """Why the rent data cannot be read at ``path`` (None when it can)."""
    if Path(path).is_file():
        return None
    return (
        f"no rent data at {path} (../shared/data/rent.csv from the repository "
        "root; pass --data PATH)"
    )


# --------------------------------------------------------------------------
# workloads that more than one script runs
#
# Q1-Q5: bench_recursive.py's data sets, each drawn per seed. Q1-Q4 are
# also tables of the field benchmark (_field_tables.py, drawn there once):
#
# - Q1: make_friedman1(n_samples=2000, n_features=30, noise=1.0); relevant
#   0..4;
# - Q2: make_classification(n_samples=2000, n_features=40, n_informative=6,
#   n_redundant=4, shuffle=False); relevant 0..9 (informative and redundant);
# - Q3 (cardinality bias): n=1000, x_rel binary, y = x_rel XOR
#   Bernoulli(0.3); noise: six N(0, 1) columns and integer columns with 4, 10
#   and 20 levels; relevant {x_rel};
# - Q4 (interaction): n=2000, x0, x1 ~ U(-1, 1), y = (x0 * x1 > 0) with 10%
#   of labels flipped, 18 N(0, 1) noise columns; relevant {0, 1};
# - Q5 (rent): 5,000 rows drawn from ../shared/data/rent.csv; interest_level
#   (three classes) from its five real columns (bathrooms, bedrooms, price,
#   longitude, latitude) plus seven planted noise columns (uniform, normal,
#   binary, integers of 10 and 50 levels, shuffled copies of price and
#   latitude); relevant: the five real columns.


def forest(task, seed, n_estimators=200, **params):
    """``RandomForest{Regressor,Classifier}(random_state=seed)`` for the task."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    model = RandomForestRegressor if task == "regression" else RandomForestClassifier
    return model(n_estimators=n_estimators, random_state=seed, **params)


def peer_scoring(task, y):
    """r2 for regression, roc_auc for two classes, roc_auc_ovr for more."""
    import numpy as np

    if task == "regression":
        return "r2"
    return "roc_auc" if len(np.unique(y)) == 2 else "roc_auc_ovr"


def q1(seed, data_path):
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(n_samples=2000, n_features=30, noise=1.0, random_state=seed)
    return X, y, set(range(5)), "regression"


def q2(seed, data_path):
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=2000,
        n_features=40,
        n_informative=6,
        n_redundant=4,
        shuffle=False,
        random_state=seed,
    )
    return X, y, set(range(10)), "classification"


def q3(seed, data_path):
    import numpy as np

    rng = np.random.RandomState(seed)
    n = 1000
    relevant = rng.randint(0, 2, n)
    y = relevant ^ (rng.uniform(size=n) < 0.3)
    columns = [relevant] + [rng.normal(size=n) for _ in range(6)]
    columns += [rng.randint(0, levels, n) for levels in (4, 10, 20)]
    return np.column_stack(columns).astype(float), y.astype(int), {0}, "classification"


def q4(seed, data_path):
    import numpy as np

    rng = np.random.RandomState(seed)
    n = 2000
    x = rng.uniform(-1, 1, size=(n, 2))
    y = (x[:, 0] * x[:, 1] > 0).astype(int)
    flipped = rng.uniform(size=n) < 0.1
    y[flipped] = 1 - y[flipped]
    X = np.column_stack([x, rng.normal(size=(n, 18))])
    return X, y, {0, 1}, "classification"


RENT_ROWS = 5000
RENT_FEATURES = ["bathrooms", "bedrooms", "price", "longitude", "latitude"]
_RENT = {}


def q5(seed, data_path):
    import numpy as np
    import pandas as pd

    if data_path not in _RENT:
        _RENT[data_path] = pd.read_csv(data_path)
    rent = _RENT[data_path]
    rng = np.random.RandomState(seed)
    rows = rng.choice(len(rent), RENT_ROWS, replace=False)
    sample = rent.iloc[rows].reset_index(drop=True)
    X = sample[RENT_FEATURES].to_numpy(dtype=float)
    noise = [
        rng.uniform(size=RENT_ROWS),
        rng.normal(size=RENT_ROWS),
        rng.randint(0, 2, RENT_ROWS),
        rng.randint(0, 10, RENT_ROWS),
        rng.randint(0, 50, RENT_ROWS),
        rng.permutation(X[:, RENT_FEATURES.index("price")]),
        rng.permutation(X[:, RENT_FEATURES.index("latitude")]),
    ]
    X = np.column_stack([X] + noise)
    return X, sample["interest_level"].to_numpy(), set(range(5)), "classification"


#: key: (label, function(seed, rent path) -> X, y, relevant set, task)
SELECTION_DATASETS = {
    "Q1": ("Q1 make_friedman1", q1),
    "Q2": ("Q2 make_classification (redundant)", q2),
    "Q3": ("Q3 cardinality bias", q3),
    "Q4": ("Q4 interaction", q4),
    "Q5": ("Q5 rent + planted noise", q5),
}

# W1-W2: bench_permutation.py (which describes them) and
# bench_kernel_calls.py. Each returns (name, X, y, unfitted model, metric).


def load_rent(path, quick):
    import numpy as np
    import pandas as pd
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.metrics import r2_score

    frame = pd.read_csv(path)
    frame = frame[frame["price"] > 0]
    X = frame[["bathrooms", "bedrooms", "longitude", "latitude"]].to_numpy(float)
    X = np.column_stack([X, np.random.RandomState(0).uniform(size=len(X))])
    y = np.log(frame["price"].to_numpy(float))
    if quick:
        X, y = X[:5000], y[:5000]
    model = RandomForestRegressor(
        n_estimators=20 if quick else 100, random_state=0, n_jobs=-1
    )
    return "W1 rent (regression)", X, y, model, r2_score


def load_synthetic(quick):
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.metrics import accuracy_score

    X, y = make_classification(
        n_samples=5000 if quick else 100_000,
        n_features=50,
        n_informative=10,
        n_redundant=10,
        random_state=0,
    )
    model = RandomForestClassifier(
        n_estimators=20 if quick else 100,
        min_samples_leaf=5,
        random_state=0,
        n_jobs=-1,
    )
    return "W2 make_classification", X, y, model, accuracy_score


# D1-D2 and rfpimp's forests: bench_dependence.py (which describes them) and
# dependence_stability_screen.py.


def load_breast_cancer_features(quick):
    from sklearn.datasets import load_breast_cancer

    X, _ = load_breast_cancer(return_X_y=True)
    if quick:
        X = X[:200, :10]
    return "D1 breast cancer", X


def redundant_data(n_rows=1000, seed=0):
    """20 independent features and 10 redundant ones (the last 10 columns)."""
    import numpy as np

    rng = np.random.RandomState(seed)
    b = np.column_stack(
        [
            rng.normal(size=(n_rows, 7)),
            rng.uniform(size=(n_rows, 7)),
            rng.exponential(size=(n_rows, 6)),
        ]
    )

    def noise():
        return 0.02 * rng.normal(size=n_rows)

    redundant = [
        np.exp(b[:, 0]),
        b[:, 1] ** 3,
        np.log1p(b[:, 14]),
        2 * b[:, 7] - 1,
        np.sqrt(b[:, 15]),
        b[:, 2] + b[:, 3],
        b[:, 8] * b[:, 9],
        b[:, 4] - b[:, 10],
        np.maximum(b[:, 5], b[:, 16]),
        b[:, 11] + b[:, 17],
    ]
    return np.column_stack([b] + [r + noise() for r in redundant])


def load_redundant(quick):
    X = redundant_data(300 if quick else 1000)
    return "D2 30 features, 10 redundant", X


#: rfpimp's dependence forests: RandomForestRegressor(n_estimators=50).
RFPIMP_TREES = 50


def rfpimp_forests_alone(X, seeds, trees=RFPIMP_TREES):
    """The dependence rfpimp reports (each forest's oob_score_), from its
    forests alone, at other seeds: how much rfpimp's per-feature standard
    deviation over five seeds itself varies from one set of seeds to the
    next."""
    import numpy as np
    from sklearn.ensemble import RandomForestRegressor

    rows = []
    for seed in seeds:
        rng = np.random.RandomState(seed)
        rows.append(
            [
                RandomForestRegressor(
                    n_estimators=trees,
                    oob_score=True,
                    random_state=rng.randint(2**31 - 1),
                )
                .fit(np.delete(X, j, axis=1), X[:, j])
                .oob_score_
                for j in range(X.shape[1])
            ]
        )
    return np.array(rows)


# The wide classification: bench_calibration.py's power regime
# "wide-classification" (the field benchmark's "wide classification" table
# is the same design, drawn once).

#: Its informative columns (the first ones).
WIDE_INFORMATIVE = 8


def wide_classification(rng):
    """600 rows, 300 columns of which the first 8 are informative:
    ``make_classification(600, 300, n_informative=8, n_redundant=0,
    shuffle=False)``; (X, y, informative mask)."""
    import numpy as np
    from sklearn.datasets import make_classification

    X, y = make_classification(
        600,
        300,
        n_informative=WIDE_INFORMATIVE,
        n_redundant=0,
        shuffle=False,
        random_state=rng,
    )
    return X, y, np.arange(300) < WIDE_INFORMATIVE
