"""Benchmark of feature_dependence and DependenceAnalyzer.

Measures, in one run, the two speed targets of the dependence work:

1. Full pass (the dependence of every feature and the dependence matrix):
   :func:`sklearn_fimp.feature_dependence` against the straightforward
   approach written below: for each feature, fit one forest (the same
   forest, same seed) to predict it from the others, score it out of bag
   (its ``oob_score_``), then compute the out-of-bag permutation
   importance of each input with the generic path (permute the column over
   the training rows, let every tree predict its out-of-bag rows, average,
   score). Both use the same permutations, so their results must agree; the
   bench checks that they do. Target: ours at least 3x faster.
2. Sequential elimination: :class:`sklearn_fimp.DependenceAnalyzer` on data
   with 30 features of which 10 are redundant, against the naive greedy loop
   that re-measures every remaining feature after each drop (one
   ``feature_dependence`` call per drop). Target: the analyzer fits at most
   2x the models of one full pass.

Workloads:

- D1: scikit-learn's breast-cancer data (569 rows, 30 numeric features).
- D2: 1000 rows, 20 independent features (normal, uniform, exponential) and
  10 redundant ones (noisy monotone transforms of one of them, or functions
  of two), seed 0.

Every model is sklearn_fimp's default forest (100 trees,
``min_samples_leaf=5``, ``max_features=1.0``) with ``n_repeats=1``, unless
a row says otherwise. Run from the repository root::

    python bench/bench_dependence.py             # everything, 3 timing runs
    python bench/bench_dependence.py --quick     # small smoke run, no docs

Timings are medians of ``--repeats`` runs of time.perf_counter (one run for
the elimination, which is long), the two implementations interleaved. The
machine may be shared: the load average at the start is recorded.
"""

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import sklearn
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import r2_score

import sklearn_fimp
from sklearn_fimp import DependenceAnalyzer, feature_dependence

# Private helpers, used only to give the straightforward approach the very
# seeds and permutations sklearn_fimp draws, so that both must agree.
from sklearn_fimp._importance._dependence import default_regressor, feature_seeds
from sklearn_fimp._utils._random import draw_seed, permutation_seed, row_permutations

ROOT = Path(__file__).resolve().parents[1]
DOCS_TABLE = ROOT / "docs" / "bench_dependence.rst"
RANDOM_STATE = 0


def load_breast_cancer_features(quick):
    X, _ = load_breast_cancer(return_X_y=True)
    if quick:
        X = X[:200, :10]
    return "D1 breast cancer", X


def redundant_data(n_rows=1000, seed=0):
    """20 independent features and 10 redundant ones (the last 10 columns)."""
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


def model_for(quick):
    model = default_regressor()
    if quick:
        model.set_params(n_estimators=20)
    return model


# -- the straightforward approach ----------------------------------------------


def generic_oob_r2(forest, oob_rows, X, y):
    """Out-of-bag R²: every tree predicts its out-of-bag rows, averaged."""
    total = np.zeros(len(y))
    count = np.zeros(len(y))
    for tree, rows in zip(forest.estimators_, oob_rows):
        total[rows] += tree.predict(X[rows])
        count[rows] += 1
    scored = count > 0
    return r2_score(y[scored], total[scored] / count[scored])


def straightforward_dependence(X, model, n_repeats, random_state, n_jobs):
    """One forest per feature, then generic-path OOB permutation importance
    of each of its inputs. Returns the dependence vector and the matrix."""
    n_rows, n_features = X.shape
    _, seeds = feature_seeds(draw_seed(random_state), n_features)
    dependence = np.empty(n_features)
    matrix = np.full((n_features, n_features), np.nan)
    for j in range(n_features):
        others = np.delete(np.arange(n_features), j)
        X_inputs = X[:, others].astype(np.float32)
        y = X[:, j]
        forest = clone(model).set_params(random_state=seeds[j], n_jobs=n_jobs)
        forest.fit(X_inputs, y)
        oob_rows = []
        for in_bag in forest.estimators_samples_:
            mask = np.ones(n_rows, dtype=bool)
            mask[in_bag] = False
            oob_rows.append(np.flatnonzero(mask))
        # the forest's oob_score_ (oob_score=True) is the same number, computed
        # once more at fit; the baseline serves as the dependence instead
        baseline = generic_oob_r2(forest, oob_rows, X_inputs, y)
        dependence[j] = baseline
        seed = permutation_seed(draw_seed(seeds[j]))
        permutations = row_permutations(seed, n_rows, n_repeats)
        for k, column in enumerate(others):
            drops = []
            for permutation in permutations:
                X_permuted = X_inputs.copy()
                X_permuted[:, k] = X_inputs[permutation, k]
                drops.append(baseline - generic_oob_r2(forest, oob_rows, X_permuted, y))
            matrix[j, column] = np.mean(drops)
    return dependence, matrix


def forest_fits(X, model, random_state):
    """Only the forests both approaches fit (same seeds), one after another."""
    n_features = X.shape[1]
    _, seeds = feature_seeds(draw_seed(random_state), n_features)
    for j in range(n_features):
        others = np.delete(np.arange(n_features), j)
        clone(model).set_params(random_state=seeds[j]).fit(X[:, others], X[:, j])


def naive_greedy_elimination(X, model, threshold, random_state, n_jobs):
    """Re-measure every remaining feature after each drop. Returns the kept
    mask and the number of models fitted."""
    active = np.arange(X.shape[1])
    n_fits = 0
    while len(active) > 1:
        result = feature_dependence(
            X[:, active],
            estimator=model,
            n_jobs=n_jobs,
            random_state=random_state,
        )
        n_fits += len(active)
        if result.dependence.max() <= threshold:
            break
        active = np.delete(active, int(np.argmax(result.dependence)))
    support = np.zeros(X.shape[1], dtype=bool)
    support[active] = True
    return support, n_fits


# -- measuring -------------------------------------------------------------------


def timed(function):
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def interleaved_medians(functions, repeats):
    """Median time of each function over ``repeats`` interleaved rounds, and
    each one's last result."""
    times = [[] for _ in functions]
    results = [None] * len(functions)
    for _ in range(repeats):
        for i, function in enumerate(functions):
            seconds, results[i] = timed(function)
            times[i].append(seconds)
    return [statistics.median(t) for t in times], results


def full_pass_rows(name, X, model, n_jobs, n_repeats, repeats):
    """Time both implementations of one full pass; check they agree."""

    def ours():
        result = feature_dependence(
            X,
            estimator=model,
            n_repeats=n_repeats,
            n_jobs=n_jobs,
            random_state=RANDOM_STATE,
        )
        return result.dependence, result.matrix

    def straightforward():
        return straightforward_dependence(X, model, n_repeats, RANDOM_STATE, n_jobs)

    functions = [ours, straightforward]
    if n_jobs == 1:
        functions.append(lambda: forest_fits(X, model, RANDOM_STATE))
    times, results = interleaved_medians(functions, repeats)
    t_ours, t_plain = times[:2]
    t_fits = times[2] if n_jobs == 1 else float("nan")
    mine, plain = results[:2]
    dependence_gap = float(np.max(np.abs(mine[0] - plain[0])))
    matrix_gap = float(np.nanmax(np.abs(mine[1] - plain[1])))
    if dependence_gap > 1e-9 or matrix_gap > 1e-9:
        raise AssertionError(
            f"{name}: sklearn_fimp and the straightforward approach disagree "
            f"(dependence by {dependence_gap:.2e}, matrix by {matrix_gap:.2e})"
        )
    task = f"full pass, n_repeats={n_repeats}"
    gap = max(dependence_gap, matrix_gap)
    line = (
        f"{name:<30} {task:<26} n_jobs={n_jobs}  ours {t_ours:7.2f}s  "
        f"straightforward {t_plain:7.2f}s  ratio {t_plain / t_ours:4.2f}x  "
        f"(max difference {gap:.1e})"
    )
    if n_jobs == 1:
        line += (
            f"\n{'':<30} forest fits alone {t_fits:7.2f}s; beyond the fits "
            f"ours {t_ours - t_fits:7.2f}s, straightforward {t_plain - t_fits:7.2f}s"
        )
    print(line)
    return (name, task, n_jobs, t_ours, t_plain, t_fits, gap)


def elimination_rows(name, X, model, n_jobs, full_pass_seconds):
    threshold = DependenceAnalyzer().threshold
    t_ours, analyzer = timed(
        lambda: DependenceAnalyzer(model, n_jobs=n_jobs, random_state=RANDOM_STATE).fit(
            X
        )
    )
    t_naive, (naive_support, naive_fits) = timed(
        lambda: naive_greedy_elimination(X, model, threshold, RANDOM_STATE, n_jobs)
    )
    n_features = X.shape[1]
    rows = [
        (
            "DependenceAnalyzer (sequential, re-measures what relied on the drop)",
            analyzer.n_fits_,
            t_ours,
            int(analyzer.support_.sum()),
        ),
        (
            "naive greedy loop (re-measures everything after each drop)",
            naive_fits,
            t_naive,
            int(naive_support.sum()),
        ),
    ]
    differ = int(np.sum(analyzer.support_ != naive_support))
    for label, fits, seconds, kept in rows:
        print(
            f"{name:<30} {label:<70} fits {fits:4d} ({fits / n_features:4.2f}x "
            f"a pass)  {seconds:7.2f}s ({seconds / full_pass_seconds:4.2f}x a "
            f"pass)  kept {kept}"
        )
    print(f"{name:<30} features kept by one elimination only: {differ}")
    return [
        (name, label, fits, fits / n_features, seconds, seconds / full_pass_seconds)
        for label, fits, seconds, _ in rows
    ], differ


# -- report ------------------------------------------------------------------------


def git_commit():
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_rst(full, elimination, kept_differ, command, load, path):
    stamp = datetime.datetime.now(datetime.timezone.utc)
    lines = [
        ".. This file is written by bench/bench_dependence.py; do not edit it.",
        "",
        "Benchmark: feature dependence and sequential elimination",
        "========================================================",
        "",
        f"- date: {stamp:%Y-%m-%d %H:%M} UTC, commit {git_commit()}",
        f"- cores (os.cpu_count()): {os.cpu_count()}; load average at start: "
        + ", ".join(f"{x:.1f}" for x in load)
        + " (shared machine)",
        f"- Python {platform.python_version()}, numpy {np.__version__}, "
        f"scikit-learn {sklearn.__version__}, sklearn_fimp {sklearn_fimp.__version__}",
        "- forests: sklearn_fimp's default (100 trees, min_samples_leaf=5, "
        "max_features=1.0); medians of interleaved runs",
        "",
        "Reproduce from the repository root with::",
        "",
        f"    {command}",
        "",
        "The straightforward approach fits the same forests with the same seeds",
        "and permutes with the same permutations; its results agree with",
        "``feature_dependence`` to the last column shown. Both fit the same",
        "forests, one per feature: the time those fits take alone (measured",
        "at n_jobs=1) bounds the speed-up, and the column after it gives the",
        "speed-up of what remains (the out-of-bag scores and the matrix).",
        "",
        ".. list-table:: Full pass: dependence vector and matrix "
        "(target: ours at least 3x faster)",
        "   :header-rows: 1",
        "",
        "   * - Workload",
        "     - Task",
        "     - n_jobs",
        "     - feature_dependence (s)",
        "     - straightforward (s)",
        "     - Speed-up",
        "     - of which forest fits (s)",
        "     - Speed-up beyond the fits",
        "     - Max difference",
    ]
    for name, task, n_jobs, t_ours, t_plain, t_fits, gap in full:
        measured = np.isfinite(t_fits)
        lines += [
            f"   * - {name}",
            f"     - {task}",
            f"     - {n_jobs}",
            f"     - {t_ours:.2f}",
            f"     - {t_plain:.2f}",
            f"     - {t_plain / t_ours:.2f}x",
            f"     - {t_fits:.2f}" if measured else "     - ",
            f"     - {(t_plain - t_fits) / (t_ours - t_fits):.1f}x"
            if measured
            else "     - ",
            f"     - {gap:.1e}",
        ]
    lines += [
        "",
        ".. list-table:: Sequential elimination, in models fitted and time, "
        "relative to one full pass (target: at most 2x the fits of a pass)",
        "   :header-rows: 1",
        "",
        "   * - Workload",
        "     - Implementation",
        "     - Models fitted",
        "     - x a full pass",
        "     - Time (s)",
        "     - Time, x a full pass",
    ]
    for name, label, fits, fits_ratio, seconds, time_ratio in elimination:
        lines += [
            f"   * - {name}",
            f"     - {label}",
            f"     - {fits}",
            f"     - {fits_ratio:.2f}",
            f"     - {seconds:.2f}",
            f"     - {time_ratio:.2f}",
        ]
    lines += [
        "",
        f"Features kept by one of the two eliminations only: {kept_differ} "
        "(where a redundant pair's two members tie, the two loops may keep a "
        "different one).",
        "",
    ]
    path.write_text("\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="timing runs per full-pass measurement (median reported)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="small data and forests, for a smoke run"
    )
    parser.add_argument(
        "--no-write",
        action="store_true",
        help=f"do not write {DOCS_TABLE.relative_to(ROOT)}",
    )
    args = parser.parse_args(argv)
    load = os.getloadavg()
    model = model_for(args.quick)
    repeats = 1 if args.quick else args.repeats

    full = []
    pass_seconds = {}
    for name, X in (
        load_breast_cancer_features(args.quick),
        load_redundant(args.quick),
    ):
        for n_jobs in (1, 2):
            row = full_pass_rows(name, X, model, n_jobs, 1, repeats)
            full.append(row)
            pass_seconds[name, n_jobs] = row[3]
    name, X = load_breast_cancer_features(args.quick)
    full.append(full_pass_rows(name, X, model, 1, 5, repeats))

    name, X = load_redundant(args.quick)
    elimination, kept_differ = elimination_rows(
        name, X, model, 2, pass_seconds[name, 2]
    )

    if not args.no_write and not args.quick:
        command = "python bench/bench_dependence.py " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        write_rst(full, elimination, kept_differ, command.strip(), load, DOCS_TABLE)
        print(f"\nwrote {DOCS_TABLE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
