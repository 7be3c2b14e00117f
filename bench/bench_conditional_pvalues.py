"""Calibration of conditional_permutation_importance's p-values.

A p-value is valid when, for a feature the target does not depend on given
the others, P(p <= a) <= a for every level a. Each regime below draws
``--datasets`` data sets where the truth is known, fits the model on
training rows and calls ``conditional_permutation_importance`` (its
defaults unless said: the forest sampler, ``n_repeats=5``) on validation
rows the model did not train on. Per regime and feature, the table gives
how many data sets have p <= 0.05 and p <= 0.01, with the counts a valid
test stays under with probability 0.999 (binomial upper quantiles), and
for the features y uses, how often p <= 0.05 (power).

Regimes (train / validation rows; y; the null features):

- ``reg-linear``: 1,000 / 300; y = x0 + 0.5 x3 + N(0, 1); null: x1 =
  0.7 x0 + N(0, 0.51) (correlation 0.7, a stand-in y does not use) and x2,
  independent N(0, 1). RandomForestRegressor(n_estimators=100).
- ``reg-nonlinear``: the same with x1 = exp(x0) + N(0, 0.5^2): the
  stand-in's relation to the cause is not linear.
- ``bin-mixed``: 1,000 / 300; binary y, logistic in x0 + 0.8 x3; null: x1
  the stand-in of ``reg-linear``, x2 N(0, 1), x4 three-level integers
  independent of all. RandomForestClassifier(n_estimators=100),
  ``scoring`` the default (accuracy; the p-value reads the Brier loss).
- ``mc3-linear-model``: 1,000 / 300; three classes from a softmax of x0
  and x3; the null features of ``bin-mixed``; a LogisticRegression on
  standardized columns, the linear sampler (the model-agnostic path).
- ``grp-reg-linear``: rows in groups of 10 (a customer's, a store's), the
  training and validation rows in different groups (100 / 30); y = x0 +
  0.5 x3 + u + N(0, 1), u a group effect N(0, 1); null: x1 the stand-in of
  ``reg-linear`` and x2, a group-level N(0, 1) column (constant within each
  group, which lets the forest fit u to it in training). The t-test over
  rows, as the default runs it; ``grp-reg-linear-row-groups``: the same data
  sets with ``row_groups=`` the validation rows' groups (the t-test over
  the 30 groups' mean differences).

Run from the repository root::

    PYTHONPATH=. python bench/bench_conditional_pvalues.py            # writes the docs
    PYTHONPATH=. python bench/bench_conditional_pvalues.py --datasets 10 --no-write
    PYTHONPATH=. python bench/bench_conditional_pvalues.py --quick   # seconds

The table is written to ``docs/bench_conditional_pvalues.rst``.
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np
from _common import (
    DOCS,
    command_line,
    cpu_timed,
    git_commit,
    heading,
    list_table,
    reproduce,
    text_table,
    utc_stamp,
    versions,
    write_page,
    written_by,
)
from joblib import Parallel, delayed
from scipy import stats
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_fimp import conditional_permutation_importance

DOCS_FILE = DOCS / "bench_conditional_pvalues.rst"
#: Trees of the forests (--quick: fewer, with fewer rows and data sets).
TREES = 100
QUICK = {"datasets": 2, "rows": (200, 100), "trees": 10}
N_TRAIN, N_VALID = 1000, 300
LEVELS = (0.05, 0.01)
#: A valid test's count of p <= a among n data sets exceeds the binomial
#: quantile at this level with probability at most 1 - this.
CONFIDENCE = 0.999


def _stand_in(rng, cause, kind):
    if kind == "exp":
        return np.exp(cause) + rng.normal(scale=0.5, size=len(cause))
    return 0.7 * cause + rng.normal(scale=np.sqrt(1 - 0.7**2), size=len(cause))


def reg_data(rng, kind):
    n = N_TRAIN + N_VALID
    x0, x2, x3 = rng.normal(size=(3, n))
    x1 = _stand_in(rng, x0, kind)
    y = x0 + 0.5 * x3 + rng.normal(size=n)
    return np.column_stack([x0, x1, x2, x3]), y


def class_data(rng, n_classes):
    n = N_TRAIN + N_VALID
    x0, x2, x3 = rng.normal(size=(3, n))
    x1 = _stand_in(rng, x0, "linear")
    x4 = rng.randint(0, 3, n).astype(float)
    if n_classes == 2:
        y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(x0 + 0.8 * x3)))).astype(int)
    else:
        logits = np.column_stack([x0, x3, -x0 - x3]) * 1.5
        proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        y = np.array([rng.choice(3, p=p) for p in proba])
    return np.column_stack([x0, x1, x2, x3, x4]), y


#: Rows per group of the grouped regimes.
GROUP_SIZE = 10


def grouped_reg_data(rng):
    """reg-linear's columns in groups of GROUP_SIZE rows: a group effect in
    y and a group-level noise column x2; returns X, y and the groups."""
    n = N_TRAIN + N_VALID
    groups = np.arange(n) // GROUP_SIZE
    n_groups = groups[-1] + 1
    x0, x3 = rng.normal(size=(2, n))
    x1 = _stand_in(rng, x0, "linear")
    x2 = rng.normal(size=n_groups)[groups]
    effect = rng.normal(size=n_groups)[groups]
    y = x0 + 0.5 * x3 + effect + rng.normal(size=n)
    return np.column_stack([x0, x1, x2, x3]), y, groups


#: The columns of each regime's data: a name, and whether y is independent
#: of the column given the others (a null feature).
REG_COLUMNS = [
    ("x0 (cause)", False),
    ("x1 (stand-in)", True),
    ("x2 (noise)", True),
    ("x3 (cause)", False),
]
CLASS_COLUMNS = [*REG_COLUMNS, ("x4 (3-level noise)", True)]


def forest_regressor(seed):
    return RandomForestRegressor(n_estimators=TREES, random_state=seed)


#: name: (data, model, sampler, columns[, whether the rows' groups are
#: passed as row_groups]); a data function returns X, y and, for grouped
#: data, the rows' groups
REGIMES = {
    "reg-linear": (
        lambda rng: reg_data(rng, "linear"),
        forest_regressor,
        "forest",
        REG_COLUMNS,
    ),
    "reg-nonlinear": (
        lambda rng: reg_data(rng, "exp"),
        forest_regressor,
        "forest",
        [REG_COLUMNS[0], ("x1 (exp stand-in)", True), *REG_COLUMNS[2:]],
    ),
    "bin-mixed": (
        lambda rng: class_data(rng, 2),
        lambda seed: RandomForestClassifier(n_estimators=TREES, random_state=seed),
        "forest",
        CLASS_COLUMNS,
    ),
    "mc3-linear-model": (
        lambda rng: class_data(rng, 3),
        lambda seed: make_pipeline(StandardScaler(), LogisticRegression()),
        "linear",
        CLASS_COLUMNS,
    ),
    "grp-reg-linear": (
        grouped_reg_data,
        forest_regressor,
        "forest",
        [REG_COLUMNS[0], REG_COLUMNS[1], ("x2 (group-level noise)", True)]
        + [REG_COLUMNS[3]],
        False,
    ),
    "grp-reg-linear-row-groups": (
        grouped_reg_data,
        forest_regressor,
        "forest",
        [REG_COLUMNS[0], REG_COLUMNS[1], ("x2 (group-level noise)", True)]
        + [REG_COLUMNS[3]],
        True,
    ),
}


def one_dataset(regime, seed):
    make, model_of, sampler, _, *passed = REGIMES[regime]
    rng = np.random.RandomState(seed)
    X, y, *groups = make(rng)
    row_groups = groups[0][N_TRAIN:] if passed and passed[0] else None
    model = model_of(seed).fit(X[:N_TRAIN], y[:N_TRAIN])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cpu, _, result = cpu_timed(
            lambda: conditional_permutation_importance(
                model,
                X[N_TRAIN:],
                y[N_TRAIN:],
                sampler=sampler,
                row_groups=row_groups,
                n_jobs=1,
                random_state=seed,
            )
        )
    return result.pvalues, cpu


def valid_bound(n, level):
    """The largest count of p <= level among n data sets that a valid test
    exceeds with probability at most 1 - CONFIDENCE."""
    return int(stats.binom.ppf(CONFIDENCE, n, level))


def run(regimes, n_datasets, n_jobs):
    results = {}
    for regime in regimes:
        start = time.perf_counter()
        outputs = Parallel(n_jobs=n_jobs)(
            delayed(one_dataset)(regime, seed) for seed in range(n_datasets)
        )
        pvalues = np.array([p for p, _ in outputs])
        cpu = float(np.mean([s for _, s in outputs]))
        results[regime] = (pvalues, cpu)
        print(
            f"{regime}: {n_datasets} data sets in {time.perf_counter() - start:.0f} s",
            flush=True,
        )
    return results


def rows_of(results):
    rows = []
    for regime, (pvalues, cpu) in results.items():
        _, _, sampler, columns, *_ = REGIMES[regime]
        n = len(pvalues)
        for j, (name, null) in enumerate(columns):
            counts = [int(np.sum(pvalues[:, j] <= a)) for a in LEVELS]
            rows.append((regime, sampler, name, null, n, counts, cpu))
    return rows


def rows_text(rows):
    body = []
    for regime, sampler, name, null, n, counts, _ in rows:
        marks = [
            f"{c}/{n}" + (" (> bound)" if null and c > valid_bound(n, a) else "")
            for c, a in zip(counts, LEVELS)
        ]
        body.append([regime, sampler, name, "null" if null else "uses", *marks])
    return text_table(
        ["regime", "sampler", "feature", "kind", "p<=.05", "p<=.01"], body
    )


def rst(rows, command, n_datasets):
    bounds = ", ".join(
        f"{valid_bound(n_datasets, a)} of {n_datasets} at p <= {a}" for a in LEVELS
    )
    lines = [
        *written_by("bench_conditional_pvalues.py"),
        ".. _bench_conditional_pvalues:",
        "",
        *heading("Calibration of the conditional importance's p-values"),
        "",
        f"- date: {utc_stamp()}, commit {git_commit()}",
        "- " + versions("numpy", "scikit-learn", "sklearn_fimp"),
        f"- cores (os.cpu_count()): {os.cpu_count()}",
        "",
        *reproduce(command),
        "The regimes, models and samplers are described at the top of "
        "``bench/bench_conditional_pvalues.py``. Each row counts the data "
        "sets in which the feature's p-value is at most 0.05 and at most "
        "0.01. For a feature the target does not use given the others "
        "(*null*), a valid p-value keeps these counts at or below "
        f"{bounds} with probability 0.999 (binomial quantiles); for a feature "
        "it uses, they are the test's power.",
        "",
    ]
    body = []
    for regime, sampler, name, null, n, counts, cpu in rows:
        cells = [
            f"{c} of {n}"
            + (" (above the bound)" if null and c > valid_bound(n, a) else "")
            for c, a in zip(counts, LEVELS)
        ]
        body.append(
            [regime, sampler, name, "yes" if null else "no", *cells, f"{cpu:.2f}"]
        )
    lines += list_table(
        None,
        [
            "Regime",
            "Sampler",
            "Feature",
            "Null",
            "p <= 0.05",
            "p <= 0.01",
            "CPU s per call",
        ],
        body,
    )
    lines += ["", *pooled_lines(rows)]
    return "\n".join(lines) + "\n"


def _pool(regime, sampler):
    """The pool a regime's null features count in: by sampler, the grouped
    regimes apart (their row-level test is expected to fail)."""
    if len(REGIMES[regime]) < 5:
        return f"the {sampler} sampler"
    how = "row_groups passed" if REGIMES[regime][4] else "the t-test over rows"
    return f"the {sampler} sampler on grouped rows, {how}"


def pooled_lines(rows):
    """One sentence per pool (:func:`_pool`): all its null features' counts
    together, against what a valid test gives (the data sets are
    independent; the features of one data set are not, so the bound is
    indicative)."""
    out = []
    for pool in dict.fromkeys(_pool(row[0], row[1]) for row in rows):
        null = [row for row in rows if _pool(row[0], row[1]) == pool and row[3]]
        if not null:
            continue
        total = sum(row[4] for row in null)
        parts = []
        for k, level in enumerate(LEVELS):
            count = sum(row[5][k] for row in null)
            parts.append(
                f"{count} of {total} at p <= {level} ({100 * count / total:.1f}%; "
                f"a valid test: {level * total:.0f} expected, at most "
                f"{valid_bound(total, level)} with probability 0.999)"
            )
        out += [
            f"All null features with {pool} together: " + "; ".join(parts) + ".",
            "",
        ]
    return out


def main(argv=None):
    global N_TRAIN, N_VALID, TREES
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=200)
    parser.add_argument(
        "--regimes", nargs="+", choices=list(REGIMES), default=list(REGIMES)
    )
    parser.add_argument("--jobs", type=int, default=2, help="data sets in parallel")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a smoke run in seconds: {QUICK['datasets']} data sets of "
        f"{QUICK['rows'][0]} / {QUICK['rows'][1]} rows per regime, forests of "
        f"{QUICK['trees']} trees, one process; prints the page",
    )
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    command = command_line("bench_conditional_pvalues.py", argv, pythonpath=True)
    if args.quick:  # in this process: worker processes would not see these
        (N_TRAIN, N_VALID), TREES = QUICK["rows"], QUICK["trees"]
        args.datasets, args.jobs = QUICK["datasets"], 1
    rows = rows_of(run(args.regimes, args.datasets, args.jobs))
    print(rows_text(rows))
    if not args.no_write:
        write_page(DOCS_FILE, rst(rows, command, args.datasets), quick=args.quick)


if __name__ == "__main__":
    main()
