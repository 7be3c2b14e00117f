"""Recursive feature elimination with a cross-validated number of features:
RecursiveImportanceSelector against scikit-learn's RFECV, probatus'
ShapRFECV and the loop users write by hand, side by side in one run.

Datasets: Q1-Q5, described and defined in ``bench/_common.py`` (Q1-Q4 are
also tables of the field benchmark, ``bench/bench_field.py``), and W, wide
data: ``make_classification(n_samples=600, n_features=300, n_informative=8,
n_redundant=0, shuffle=False)``, relevant 0..7.

Every selector gets the same model, ``RandomForest*(n_estimators=30,
random_state=seed)`` (n_jobs=None, one core), the same splits (3-fold
KFold for regression, StratifiedKFold for classification, shuffled with
``seed``), the same scoring (r2; roc_auc for two classes, roc_auc_ovr for
more), ``min_features_to_select=1`` and the same step (features dropped per
step: 1 below 16 features, n_features // 10 up to 100, 10 for W), so all
of them score the same subset sizes. (W's step was 30 before: sizes 30 and
then 1 capped every selector's F1 at 0.42, 8 relevant among 30 kept, so
the table said nothing about which selector finds the 8.)

- sklearn_fimp: ``RecursiveImportanceSelector(model, step=step, cv=cv,
  scoring=scoring, random_state=seed)``, its default ``method="auto"``
  (MDI-oob: impurity decreases re-scored on out-of-bag rows); and the same
  with ``method="permutation"`` (permutation importance on an inner 20%
  held-out split of each training split, n_repeats=5).
- scikit-learn ``RFECV(model, step=step, cv=cv, scoring=scoring)``: ranks
  by ``feature_importances_`` (MDI on the training rows).
- probatus ``ShapRFECV(model, step=step, cv=cv, scoring=scoring,
  n_jobs=1, random_state=seed)``, ``fit_compute(check_additivity=False)``
  (shap's additivity check stops it on Q1) then
  ``get_reduced_features_set(num_features="best")``: mean |SHAP| on each
  split's validation rows.
- The straightforward loop: for each split, an inner 80/20 split of the
  training rows; at every size, fit the model on the 80%,
  ``sklearn.inspection.permutation_importance(n_repeats=5)`` on the 20%,
  score on the split's test rows, drop the ``step`` least important; the
  size with the best mean score is chosen and the same loop is run on all
  rows down to it.

Reported per dataset (seed 0 unless ``--seeds``): F1 of the selected set
against the known relevant features, the number selected, the
cross-validated score of a fresh model on the selected columns (3-fold, a
different shuffle: seed + 1000, so no selector is scored on its own
splits), and seconds of the selection.

Run from the repository root::

    PYTHONPATH=. python bench/bench_recursive.py              # writes the docs
    PYTHONPATH=. python bench/bench_recursive.py --datasets Q3 --no-write

The table is printed and written to ``docs/bench_recursive.rst``;
``--json FILE`` also saves the rows, and ``--from-json FILE ...`` writes
the page from rows saved by several runs (to split a run across processes).
"""

import argparse
import json
import os
import sys
import tempfile
import warnings
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from _common import (
    DOCS,
    RENT_CSV,
    SELECTION_DATASETS,
    command_line,
    forest,
    list_table,
    missing,
    peer_scoring,
    rent_missing,
    reproduce,
    skip,
    text_table,
    timed,
    utc_stamp,
    versions,
    write_page,
    written_by,
)
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.feature_selection import RFECV
from sklearn.inspection import permutation_importance
from sklearn.metrics import get_scorer
from sklearn.model_selection import (
    KFold,
    StratifiedKFold,
    cross_val_score,
    train_test_split,
)

from sklearn_fimp import RecursiveImportanceSelector

DEFAULT_DATA = RENT_CSV
DOCS_FILE = DOCS / "bench_recursive.rst"
#: Trees of every selector's forest (--quick: fewer).
N_ESTIMATORS = 30
N_SPLITS = 3
N_REPEATS = 5
SELECTORS = (
    "sklearn_fimp (auto: MDI-oob)",
    "sklearn_fimp (permutation)",
    "scikit-learn RFECV",
    "probatus ShapRFECV",
    "straightforward loop",
)


def wide(seed, data_path):
    X, y = make_classification(
        n_samples=600,
        n_features=300,
        n_informative=8,
        n_redundant=0,
        shuffle=False,
        random_state=seed,
    )
    return X, y, set(range(8)), "classification"


#: --quick: Q3 on seed 0, forests of a few trees, the page from the rows
#: saved and read back as --json and --from-json do.
QUICK = {"datasets": ["Q3"], "seeds": [0], "trees": 5}


DATASETS = {
    **SELECTION_DATASETS,
    "W": ("W wide 600 x 300, 8 informative", wide),
}


def step_for(n_features):
    if n_features > 100:
        return 10
    return 1 if n_features < 16 else n_features // 10


def splitter(task, seed):
    kind = KFold if task == "regression" else StratifiedKFold
    return kind(N_SPLITS, shuffle=True, random_state=seed)


# --------------------------------------------------------------------------
# selectors: each returns the selected column positions


def ours(X, y, task, seed, method="auto"):
    selector = RecursiveImportanceSelector(
        forest(task, seed, n_estimators=N_ESTIMATORS),
        method=method,
        step=step_for(X.shape[1]),
        cv=splitter(task, seed),
        scoring=peer_scoring(task, y),
        n_repeats=N_REPEATS,
        random_state=seed,
    ).fit(X, y)
    return np.flatnonzero(selector.support_)


def rfecv(X, y, task, seed):
    selector = RFECV(
        forest(task, seed, n_estimators=N_ESTIMATORS),
        step=step_for(X.shape[1]),
        cv=splitter(task, seed),
        scoring=peer_scoring(task, y),
    ).fit(X, y)
    return np.flatnonzero(selector.support_)


def probatus(X, y, task, seed):
    from probatus.feature_elimination import ShapRFECV

    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    selector = ShapRFECV(
        forest(task, seed, n_estimators=N_ESTIMATORS),
        step=step_for(X.shape[1]),
        cv=splitter(task, seed),
        scoring=peer_scoring(task, y),
        n_jobs=1,
        random_state=seed,
    )
    # shap's additivity check fails on some regression forests of this
    # scikit-learn (a sum of SHAP values 24.20 against a prediction of 22.24
    # on Q1), which stops the elimination; the values are used as ranks only
    selector.fit_compute(frame, y, check_additivity=False)
    kept = selector.get_reduced_features_set(num_features="best")
    return np.array(sorted(int(name[1:]) for name in kept))


#: Seconds the straightforward loop spends fitting its models (reset per
#: run): no method that fits the same models can be faster than these.
LOOP_FIT_SECONDS = [0.0]


def _loop_path(model, X, y, train, test, sizes, scorer, task, seed):
    """One elimination by refits and permutation_importance; the scores of
    the sizes on ``test`` and the features left at the last size."""
    stratify = None if task == "regression" else y[train]
    fit_rows, held_out = train_test_split(
        train, test_size=0.2, random_state=seed, stratify=stratify
    )
    features = np.arange(X.shape[1])
    scores = []
    for k, size in enumerate(sizes):
        rows = np.ix_(fit_rows, features)
        seconds, fitted = timed(partial(clone(model).fit, X[rows], y[fit_rows]))
        LOOP_FIT_SECONDS[0] += seconds
        if test is not None:
            scores.append(scorer(fitted, X[np.ix_(test, features)], y[test]))
        if k == len(sizes) - 1:
            break
        result = permutation_importance(
            fitted,
            X[np.ix_(held_out, features)],
            y[held_out],
            scoring=scorer,
            n_repeats=N_REPEATS,
            random_state=seed,
        )
        order = np.argsort(result.importances_mean, kind="stable")
        features = np.delete(features, order[: size - sizes[k + 1]])
    return scores, features


def straightforward_loop(X, y, task, seed):
    model = forest(task, seed, n_estimators=N_ESTIMATORS)
    scorer = get_scorer(peer_scoring(task, y))
    step, n = step_for(X.shape[1]), X.shape[1]
    sizes = list(range(n, 1, -step)) + [1]
    scores = np.column_stack(
        [
            _loop_path(model, X, y, train, test, sizes, scorer, task, seed)[0]
            for train, test in splitter(task, seed).split(X, y)
        ]
    )
    best = int(np.argmax(scores.mean(axis=1)))
    rows = np.arange(len(y))
    _, kept = _loop_path(model, X, y, rows, None, sizes[: best + 1], scorer, task, seed)
    return kept


RUNNERS = {
    SELECTORS[0]: ours,
    SELECTORS[1]: lambda X, y, task, seed: ours(X, y, task, seed, "permutation"),
    SELECTORS[2]: rfecv,
    SELECTORS[3]: probatus,
    SELECTORS[4]: straightforward_loop,
}


# --------------------------------------------------------------------------
# measuring


def f1_score(selected, relevant):
    selected = {int(i) for i in selected}
    hits = len(selected & relevant)
    if not selected or not hits:
        return 0.0
    precision, recall = hits / len(selected), hits / len(relevant)
    return 2 * precision * recall / (precision + recall)


def subset_score(X, y, task, seed, selected):
    """Cross-validated score of a fresh model on the selected columns, on
    splits no selector used."""
    model = forest(task, seed, n_estimators=N_ESTIMATORS)
    return float(
        cross_val_score(
            model,
            X[:, np.asarray(selected, dtype=int)],
            y,
            cv=splitter(task, seed + 1000),
            scoring=peer_scoring(task, y),
        ).mean()
    )


def run(datasets, seeds, data_path, selectors):
    rows = []
    for key in datasets:
        label, make = DATASETS[key]
        for name in selectors:
            measured = []
            for seed in seeds:
                X, y, relevant, task = make(seed, data_path)
                LOOP_FIT_SECONDS[0] = 0.0
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    seconds, selected = timed(partial(RUNNERS[name], X, y, task, seed))
                score = subset_score(X, y, task, seed, selected)
                fits = LOOP_FIT_SECONDS[0] if name == SELECTORS[4] else np.nan
                measured.append(
                    (f1_score(selected, relevant), len(selected), score, seconds, fits)
                )
                print(
                    f"{key} seed {seed} {name}: {len(selected)} selected "
                    f"{sorted(int(i) for i in selected)[:12]} F1 {measured[-1][0]:.2f}"
                    f" score {score:.3f} in {seconds:.1f} s",
                    flush=True,
                )
            f1, n_selected, score, seconds, fits = np.mean(measured, axis=0)
            rows.append(
                [key, label, name, f1, n_selected, score, seconds, fits, list(seeds)]
            )
    return rows


def merge_seeds(rows):
    """Rows of one (dataset, selector) from runs on different seeds, as one
    row: the means over all their seeds (each run's row is a mean over its
    own seeds), in the order the rows first appear."""
    merged = {}
    for row in rows:
        merged.setdefault((row[0], row[2]), []).append(row)
    out = []
    for group in merged.values():
        seeds = [seed for row in group for seed in row[8]]
        weights = [len(row[8]) for row in group]
        values = np.average([row[3:8] for row in group], axis=0, weights=weights)
        out.append([*group[0][:3], *values, seeds])
    return out


# --------------------------------------------------------------------------
# reporting


def ratios(rows):
    """Per dataset and our selector (auto, permutation): the loop's time
    over ours, and the loop's time over its fitting time (the most that any
    method fitting the same models could gain); where both ran on the same
    seeds."""
    by = {(r[0], r[2]): r for r in rows}
    out = []
    for key in dict.fromkeys(r[0] for r in rows):
        loop = by.get((key, SELECTORS[4]))
        if loop is None:
            continue
        bound = loop[6] / loop[7] if len(loop) > 7 and loop[7] > 0 else np.nan
        for name in SELECTORS[:2]:
            # times compare within a run: the same seeds, or no ratio
            if (key, name) in by and by[(key, name)][8] == loop[8]:
                out.append((key, name, loop[6] / by[(key, name)][6], bound))
    return out


def table_text(rows):
    out = [
        text_table(
            ["dataset", "selector", "F1", "n", "score", "s"],
            [
                [label, name, f"{f1:.2f}", f"{n:.1f}", f"{score:.3f}", f"{seconds:.1f}"]
                for _, label, name, f1, n, score, seconds, *_ in rows
            ],
        )
    ]
    out += ["", "straightforward loop time / sklearn_fimp time:"]
    out += [
        f"  {key} {name}: {ratio:.1f}x (loop time / its fitting time: {bound:.1f}x)"
        for key, name, ratio, bound in ratios(rows)
    ]
    return "\n".join(out)


def rst(rows, command, skipped):
    lines = [
        *written_by("bench_recursive.py"),
        ".. _bench_recursive:",
        "",
        "Benchmark: recursive elimination against RFECV, ShapRFECV and the loop",
        "=======================================================================",
        "",
        f"- date: {utc_stamp()}",
        f"- cores (os.cpu_count()): {os.cpu_count()}, shared with other jobs "
        "while this ran; every model with n_jobs=None (one core)",
        "- "
        + versions(
            "numpy", "scikit-learn", "pandas", "sklearn_fimp", "probatus", "shap"
        ),
        "- seeds: in the table's Seeds column; F1, features kept, score and "
        "time are means over them",
        "",
        *reproduce(command),
        "The datasets and the settings of every selector are described at the "
        "top of ``bench/bench_recursive.py``: the same forest, splits, scoring "
        "and step for all. F1 is against the known relevant features; score is "
        "the cross-validated score (r2, or ROC AUC) of a fresh forest on the "
        "selected columns, on splits no selector used; time is seconds of the "
        "selection (whole fit, in-script).",
        "",
    ]
    if skipped:
        lines += [f"Notes: {skipped}", ""]
    lines += list_table(
        "Selection quality, score and time",
        ["Dataset", "Selector", "F1", "Features kept", "CV score", "Time (s)", "Seeds"],
        [
            [
                label,
                name,
                f"{f1:.2f}",
                f"{n:.0f}" if n == round(n) else f"{n:.1f}",
                f"{score:.3f}",
                f"{seconds:.1f}",
                ", ".join(map(str, row_seeds)),
            ]
            for _, label, name, f1, n, score, seconds, _, row_seeds in rows
        ],
    )
    found = ratios(rows)
    if found:
        lines += [""] + list_table(
            "Time of the straightforward loop over ours",
            [
                "Dataset",
                "Ours",
                "Loop time / our time",
                "Loop time / the loop's fitting time",
            ],
            [
                [key, name, f"{ratio:.1f}", f"{bound:.1f}"]
                for key, name, ratio, bound in found
            ],
        )
        lines += [
            "",
            "The last column is the gain of a selector that fitted the same "
            "models as the loop and measured importance for free: the loop "
            "refits the model at every size, as ours does (ours on all the "
            "training rows of a split with out-of-bag importance, the loop "
            "on 80% of them). Where ours is close to it, fitting is nearly "
            "all its time. On a shared machine the two columns come from "
            "different minutes of the run, and the first can exceed the "
            "second.",
        ]
    return "\n".join(lines) + "\n"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=(
            "Compare RecursiveImportanceSelector with RFECV, probatus ShapRFECV "
            "and the refit + permutation_importance loop; write "
            "docs/bench_recursive.rst."
        )
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--datasets", nargs="+", choices=sorted(DATASETS), default=sorted(DATASETS)
    )
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument(
        "--selectors",
        nargs="+",
        type=int,
        choices=range(len(SELECTORS)),
        default=list(range(len(SELECTORS))),
        help="selectors by position: "
        + ", ".join(f"{i}={n}" for i, n in enumerate(SELECTORS)),
    )
    parser.add_argument("--json", type=Path, help="also save the rows here")
    parser.add_argument(
        "--from-json",
        nargs="+",
        type=Path,
        help="write the page from rows saved by earlier runs, running nothing",
    )
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run in seconds: Q3, seed 0, forests of "
        f"{QUICK['trees']} trees; prints the page instead of writing it",
    )
    return parser.parse_args(argv)


def read_json(paths):
    """The rows, commands and notes of runs saved with --json, as one run
    gives them: a (dataset, selector)'s rows from runs on different seeds
    averaged (see merge_seeds), in the order of DATASETS and SELECTORS."""
    rows, commands, notes = [], [], []
    for path in paths:
        saved = json.loads(Path(path).read_text())
        # rows saved before rows recorded their seeds (8 columns): the
        # run's --seeds, or seed 0 where the file predates those too
        rows += [
            row if len(row) > 8 else [*row, saved.get("seeds", [0])]
            for row in saved["rows"]
        ]
        commands.append(saved["command"])
        notes += [saved["note"]] if saved.get("note") else []
    rows = merge_seeds(rows)
    rows.sort(key=lambda r: (list(DATASETS).index(r[0]), SELECTORS.index(r[2])))
    return rows, "\n    ".join(commands), " ".join(notes)


def main(argv=None):
    global N_ESTIMATORS
    argv = argv if argv is not None else sys.argv[1:]
    args = parse_args(argv)
    command = command_line("bench_recursive.py", argv, pythonpath=True)
    if args.quick:
        N_ESTIMATORS = QUICK["trees"]
        args.datasets, args.seeds = QUICK["datasets"], QUICK["seeds"]
    skipped = ""
    if args.from_json:
        rows, command, skipped = read_json(args.from_json)
    else:
        datasets = list(args.datasets)
        if "Q5" in datasets and rent_missing(args.data):
            skipped = f"Q5: the rent data was not found at {args.data}."
            skip("Q5", rent_missing(args.data))
            datasets.remove("Q5")
        selectors = [SELECTORS[i] for i in args.selectors]
        why = missing("probatus") if SELECTORS[3] in selectors else None
        if why:
            skipped += f" probatus ShapRFECV: {why}."
            skip(SELECTORS[3], why)
            selectors = [s for s in selectors if s != SELECTORS[3]]
        rows = run(datasets, args.seeds, args.data, selectors)
        saved = {"rows": rows, "command": command, "seeds": args.seeds}
        if args.quick:  # through --json and --from-json, in a temporary folder
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder, "rows.json")
                path.write_text(json.dumps(saved))
                rows, command, _ = read_json([path])
        elif args.json:
            args.json.write_text(json.dumps(saved))
    print()
    print(table_text(rows))
    if not args.no_write:
        write_page(DOCS_FILE, rst(rows, command, skipped), quick=args.quick)


if __name__ == "__main__":
    main()
