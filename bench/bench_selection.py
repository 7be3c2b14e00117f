"""Feature selection on data with known relevant features: ImportanceSelector
against BorutaPy, feature-engine, SelectFromModel and one random column.

Datasets (each drawn with seeds 0, 1 and 2):

- Q1: make_friedman1(n_samples=2000, n_features=30, noise=1.0); relevant
  0..4.
- Q2: make_classification(n_samples=2000, n_features=40, n_informative=6,
  n_redundant=4, shuffle=False); relevant 0..9 (informative and redundant).
- Q3 (cardinality bias): n=1000, x_rel binary, y = x_rel XOR Bernoulli(0.3);
  noise: six N(0, 1) columns and integer columns with 4, 10 and 20 levels;
  relevant {x_rel}.
- Q4 (interaction): n=2000, x0, x1 ~ U(-1, 1), y = (x0 * x1 > 0) with 10% of
  labels flipped, 18 N(0, 1) noise columns; relevant {0, 1}.
- Q5 (rent): 5,000 rows drawn from ``../shared/data/rent.csv``; classify
  interest_level (three classes) from its five real columns (bathrooms,
  bedrooms, price, longitude, latitude) plus seven planted noise columns of
  different kinds: uniform, normal, binary, integers with 10 and 50 levels,
  and shuffled copies of price and latitude (same values as the real
  columns, no relation to the target). Relevant: the five real columns.

Selectors (every RandomForest has n_estimators=200 and random_state=seed
unless said otherwise, and runs with n_jobs=None, i.e. one core):

- sklearn_fimp: ``ImportanceSelector(RandomForest*(n_estimators=60,
  random_state=seed), random_state=seed)``, every other parameter at its
  default: 10 rounds of probes, each fitting a 60-tree forest (600 trees in
  all, three times the other selectors' one forest; with 20-tree rounds
  Q5's recall fell to 0.73, two of the five real columns only "tentative",
  and with 30-tree rounds under the combined-rounds test to 0.87, F1 0.93,
  seeds 0-2).
  Its time includes refitting the 60-tree forest on the selection.
- BorutaPy (``boruta`` package): RandomForest with max_depth=5,
  ``n_estimators="auto"``, random_state=seed; confirmed features only.
- feature-engine ProbeFeatureSelection and SelectByShuffling: their
  defaults, with scoring "r2" for regression, "roc_auc" for binary and
  "roc_auc_ovr" for multiclass targets (their default "roc_auc" does not
  apply to those), random_state=seed.
- scikit-learn SelectFromModel(threshold="mean").
- Single random column: append one uniform random column, fit the forest on
  75% of the rows, and keep the features whose
  ``sklearn.inspection.permutation_importance`` (n_repeats=5) on the other
  25% is larger than the random column's.

Reported: mean precision, recall and F1 of the selected set over the seeds,
and mean seconds of ``fit``.

Run from the repository root::

    python bench/bench_selection.py                 # full run, writes the docs
    python bench/bench_selection.py --datasets Q3 --seeds 0 --no-write  # smoke

The table is printed and written to ``docs/bench_selection.rst``.
"""

import argparse
import datetime
import os
import platform
import shlex
import sys
import time
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
from sklearn.datasets import make_classification, make_friedman1
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.feature_selection import SelectFromModel
from sklearn.inspection import permutation_importance
from sklearn.model_selection import train_test_split

import sklearn_fimp
from sklearn_fimp import ImportanceSelector

SCRIPT = Path(__file__).resolve()
REPO_ROOT = SCRIPT.parents[1]
DEFAULT_DATA = SCRIPT.parents[2] / "shared" / "data" / "rent.csv"
DOCS_FILE = REPO_ROOT / "docs" / "bench_selection.rst"
SEEDS = (0, 1, 2)
N_ESTIMATORS = 200
RENT_ROWS = 5000
RENT_FEATURES = ["bathrooms", "bedrooms", "price", "longitude", "latitude"]
SELECTORS = (
    "sklearn_fimp ImportanceSelector",
    "BorutaPy",
    "feature-engine ProbeFeatureSelection",
    "feature-engine SelectByShuffling",
    "SelectFromModel(threshold='mean')",
    "single random column",
)


# --------------------------------------------------------------------------
# data


def q1(seed, data_path):
    X, y = make_friedman1(n_samples=2000, n_features=30, noise=1.0, random_state=seed)
    return X, y, set(range(5)), "regression"


def q2(seed, data_path):
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
    rng = np.random.RandomState(seed)
    n = 1000
    relevant = rng.randint(0, 2, n)
    y = relevant ^ (rng.uniform(size=n) < 0.3)
    columns = [relevant] + [rng.normal(size=n) for _ in range(6)]
    columns += [rng.randint(0, levels, n) for levels in (4, 10, 20)]
    return (
        np.column_stack(columns).astype(float),
        y.astype(int),
        {0},
        ("classification"),
    )


def q4(seed, data_path):
    rng = np.random.RandomState(seed)
    n = 2000
    x = rng.uniform(-1, 1, size=(n, 2))
    y = (x[:, 0] * x[:, 1] > 0).astype(int)
    flipped = rng.uniform(size=n) < 0.1
    y[flipped] = 1 - y[flipped]
    X = np.column_stack([x, rng.normal(size=(n, 18))])
    return X, y, {0, 1}, "classification"


_RENT = {}


def q5(seed, data_path):
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


DATASETS = {
    "Q1": ("Q1 make_friedman1", q1),
    "Q2": ("Q2 make_classification (redundant)", q2),
    "Q3": ("Q3 cardinality bias", q3),
    "Q4": ("Q4 interaction", q4),
    "Q5": ("Q5 rent + planted noise", q5),
}


# --------------------------------------------------------------------------
# selectors: each returns the selected column positions


#: Trees of each round's forest of ImportanceSelector (10 rounds by default).
ROUND_TREES = 60


def forest(task, seed, **params):
    model = RandomForestRegressor if task == "regression" else RandomForestClassifier
    params.setdefault("n_estimators", N_ESTIMATORS)
    return model(random_state=seed, **params)


def peer_scoring(task, y):
    if task == "regression":
        return "r2"
    return "roc_auc" if len(np.unique(y)) == 2 else "roc_auc_ovr"


def as_frame(X):
    return pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])


def ours(X, y, task, seed):
    # 10 rounds (the default) of 60-tree forests
    model = forest(task, seed, n_estimators=ROUND_TREES)
    selector = ImportanceSelector(model, random_state=seed).fit(X, y)
    return selector.get_support(indices=True)


def boruta(X, y, task, seed):
    from boruta import BorutaPy

    selector = BorutaPy(
        forest(task, seed, max_depth=5), n_estimators="auto", random_state=seed
    )
    selector.fit(X, y)
    return np.flatnonzero(selector.support_)


def _feature_engine_kept(selector, frame):
    dropped = set(selector.features_to_drop_)
    return np.array([i for i, c in enumerate(frame.columns) if c not in dropped])


def probe_feature_selection(X, y, task, seed):
    from feature_engine.selection import ProbeFeatureSelection

    frame = as_frame(X)
    selector = ProbeFeatureSelection(
        forest(task, seed), scoring=peer_scoring(task, y), random_state=seed
    ).fit(frame, y)
    return _feature_engine_kept(selector, frame)


def select_by_shuffling(X, y, task, seed):
    from feature_engine.selection import SelectByShuffling

    frame = as_frame(X)
    selector = SelectByShuffling(
        forest(task, seed), scoring=peer_scoring(task, y), random_state=seed
    ).fit(frame, y)
    return _feature_engine_kept(selector, frame)


def select_from_model(X, y, task, seed):
    selector = SelectFromModel(forest(task, seed), threshold="mean").fit(X, y)
    return selector.get_support(indices=True)


def single_random_column(X, y, task, seed):
    rng = np.random.RandomState(seed)
    X_random = np.column_stack([X, rng.uniform(size=X.shape[0])])
    X_train, X_test, y_train, y_test = train_test_split(
        X_random, y, test_size=0.25, random_state=seed
    )
    model = forest(task, seed).fit(X_train, y_train)
    result = permutation_importance(
        model, X_test, y_test, n_repeats=5, random_state=seed
    )
    means = result.importances_mean
    return np.flatnonzero(means[:-1] > means[-1])


RUNNERS = dict(
    zip(
        SELECTORS,
        (
            ours,
            boruta,
            probe_feature_selection,
            select_by_shuffling,
            select_from_model,
            single_random_column,
        ),
    )
)


# --------------------------------------------------------------------------
# measuring


def scores(selected, relevant):
    selected = {int(i) for i in selected}
    hits = len(selected & relevant)
    precision = hits / len(selected) if selected else 0.0
    recall = hits / len(relevant)
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    return precision, recall, f1


def run(datasets, seeds, data_path, selectors):
    rows = []
    for key in datasets:
        label, make = DATASETS[key]
        for name in selectors:
            measured = []
            for seed in seeds:
                X, y, relevant, task = make(seed, data_path)
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    selected = RUNNERS[name](X, y, task, seed)
                seconds = time.perf_counter() - start
                measured.append((*scores(selected, relevant), seconds))
                print(
                    f"{key} seed {seed} {name}: selected "
                    f"{sorted(int(i) for i in selected)} in {seconds:.1f} s",
                    flush=True,
                )
            precision, recall, f1, seconds = np.mean(measured, axis=0)
            rows.append((key, label, name, precision, recall, f1, seconds))
    return rows


# --------------------------------------------------------------------------
# reporting


def version(package):
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def summary(rows, datasets):
    """Mean F1 per selector over the datasets run, and our time ratios."""
    by = {(r[0], r[2]): r for r in rows}
    lines = []
    for name in SELECTORS:
        f1 = [by[(d, name)][5] for d in datasets if (d, name) in by]
        if f1:
            lines.append((name, float(np.mean(f1))))
    ratios = []
    for d in datasets:
        if (d, SELECTORS[0]) in by and (d, "BorutaPy") in by:
            ratios.append((d, by[(d, SELECTORS[0])][6] / by[(d, "BorutaPy")][6]))
    return lines, ratios


def table_text(rows, datasets):
    header = (
        f"{'dataset':<38} {'selector':<38} {'prec':>5} {'rec':>5} {'F1':>5} {'s':>7}"
    )
    out = [header, "-" * len(header)]
    for _, label, name, precision, recall, f1, seconds in rows:
        out.append(
            f"{label:<38} {name:<38} {precision:5.2f} {recall:5.2f} {f1:5.2f} "
            f"{seconds:7.1f}"
        )
    means, ratios = summary(rows, datasets)
    out.append("")
    out.append("mean F1 over " + ", ".join(datasets) + ":")
    out.extend(f"  {name:<38} {f1:.3f}" for name, f1 in means)
    out.append("sklearn_fimp time / BorutaPy time:")
    out.extend(f"  {d}: {ratio:.2f}" for d, ratio in ratios)
    return "\n".join(out)


def rst(rows, datasets, seeds, command, skipped):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    means, ratios = summary(rows, datasets)
    lines = [
        ".. This file is written by bench/bench_selection.py; do not edit it.",
        "",
        "Benchmark: selecting features with known relevant ones",
        "======================================================",
        "",
        f"- date: {now}",
        f"- cores (os.cpu_count()): {os.cpu_count()}; every model with "
        "n_jobs=None (one core)",
        f"- Python {platform.python_version()}, numpy {np.__version__}, "
        f"scikit-learn {sklearn.__version__}, pandas {pd.__version__}, "
        f"sklearn_fimp {sklearn_fimp.__version__}, boruta {version('boruta')}, "
        f"feature-engine {version('feature-engine')}",
        f"- seeds: {', '.join(map(str, seeds))}; precision, recall, F1 of the "
        "selected set and seconds of fit are means over the seeds",
        "",
        "Reproduce from the repository root with::",
        "",
        f"    {command}",
        "",
        "The datasets and the settings of every selector are described at the "
        "top of ``bench/bench_selection.py``.",
        "",
    ]
    if skipped:
        lines += [f"Not run: {skipped}", ""]
    lines += [
        ".. list-table:: Selection quality and time",
        "   :header-rows: 1",
        "",
        "   * - Dataset",
        "     - Selector",
        "     - Precision",
        "     - Recall",
        "     - F1",
        "     - Time (s)",
    ]
    for _, label, name, precision, recall, f1, seconds in rows:
        lines += [
            f"   * - {label}",
            f"     - {name}",
            f"     - {precision:.2f}",
            f"     - {recall:.2f}",
            f"     - {f1:.2f}",
            f"     - {seconds:.1f}",
        ]
    lines += [
        "",
        ".. list-table:: Mean F1 over " + ", ".join(datasets),
        "   :header-rows: 1",
        "",
        "   * - Selector",
        "     - Mean F1",
    ]
    for name, f1 in means:
        lines += [f"   * - {name}", f"     - {f1:.3f}"]
    if ratios:
        lines += [
            "",
            ".. list-table:: Time of ImportanceSelector relative to BorutaPy",
            "   :header-rows: 1",
            "",
            "   * - Dataset",
            "     - sklearn_fimp time / BorutaPy time",
        ]
        for d, ratio in ratios:
            lines += [f"   * - {d}", f"     - {ratio:.2f}"]
    return "\n".join(lines) + "\n"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=(
            "Compare ImportanceSelector with BorutaPy, feature-engine, "
            "SelectFromModel and a single random column on data with known "
            "relevant features; write docs/bench_selection.rst."
        )
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help=f"path of rent.csv for Q5 (default: {DEFAULT_DATA})",
    )
    parser.add_argument(
        "--datasets",
        nargs="+",
        choices=sorted(DATASETS),
        default=sorted(DATASETS),
        help="datasets to run (default: all)",
    )
    parser.add_argument(
        "--seeds",
        nargs="+",
        type=int,
        default=list(SEEDS),
        help="seeds (default: 0 1 2)",
    )
    parser.add_argument(
        "--selectors",
        nargs="+",
        choices=range(len(SELECTORS)),
        type=int,
        default=list(range(len(SELECTORS))),
        help="selectors by position: "
        + ", ".join(f"{i}={n}" for i, n in enumerate(SELECTORS)),
    )
    parser.add_argument(
        "--no-write",
        action="store_true",
        help="print the table only; do not write docs/bench_selection.rst",
    )
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    datasets = list(args.datasets)
    skipped = ""
    if "Q5" in datasets and not args.data.is_file():
        skipped = (
            f"Q5: the rent data was not found at {args.data} (pass --data "
            "PATH/rent.csv)."
        )
        print(f"Skipping {skipped}", file=sys.stderr)
        datasets.remove("Q5")
    selectors = [SELECTORS[i] for i in args.selectors]
    rows = run(datasets, args.seeds, args.data, selectors)
    print()
    print(table_text(rows, datasets))
    if not args.no_write:
        command = "python bench/bench_selection.py" + (
            " " + shlex.join(argv if argv is not None else sys.argv[1:])
            if (argv if argv is not None else sys.argv[1:])
            else ""
        )
        DOCS_FILE.write_text(rst(rows, datasets, args.seeds, command, skipped))
        print(f"\nwrote {DOCS_FILE.relative_to(REPO_ROOT)}")


if __name__ == "__main__":
    main()
