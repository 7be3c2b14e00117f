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

- sklearn_fimp: ``ImportanceSelector(RandomForest*(n_estimators=200,
  random_state=seed), random_state=seed)``, the other selectors' forest,
  every other parameter at its default: 10 rounds of probes, each fitting
  60 of the forest's 200 trees (``round_trees="auto"``: 30%; 600 trees in
  all, three times the forest; with 20-tree rounds Q5's recall fell to
  0.73, two of the five real columns only "tentative", and with 30-tree
  rounds under the combined-rounds test to 0.87, F1 0.93, seeds 0-2).
  Its time includes refitting the 200-tree forest on the selection.
- sklearn_fimp's default: ``ImportanceSelector(random_state=seed)``
  (``estimator=None``: scikit-learn's default forest, fitted with 30 trees in
  each of the 10 rounds, and with its default 100 trees in the refit).
- sklearn_fimp's default with 15-tree rounds (``ImportanceSelector(
  round_trees=15)``; the refit keeps 100 trees): what halving the rounds'
  forests saves and costs.
- sklearn_fimp on a boosted model: ``ImportanceSelector(
  HistGradientBoosting*(random_state=seed), random_state=seed)``
  (``method="auto"``: permutation on a held-out fifth of the rows).
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
and mean seconds of ``fit``; for our four selectors, the cost in plain fits
(one ``fit`` of the model the selector wraps, on the same rows, timed in the
same run: the 200-tree forest, scikit-learn's default forest for both default
variants, the HistGradientBoosting model) and against BorutaPy, per data set
and in total.

Run from the repository root::

    python bench/bench_selection.py                 # full run, writes the docs
    python bench/bench_selection.py --datasets Q3 --seeds 0 --no-write
    python bench/bench_selection.py --quick         # seconds; prints the page

A missing peer (boruta, feature-engine) or rent data is skipped, and the
page says so.

The table is printed and written to ``docs/bench_selection.rst``.
"""

import argparse
import os
import sys
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
    heading,
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
from _common import forest as _forest
from sklearn.feature_selection import SelectFromModel
from sklearn.inspection import permutation_importance
from sklearn.model_selection import train_test_split

from sklearn_fimp import ImportanceSelector

DEFAULT_DATA = RENT_CSV
DOCS_FILE = DOCS / "bench_selection.rst"
SEEDS = (0, 1, 2)
#: Trees of every RandomForest but ImportanceSelector's (--quick: fewer).
N_ESTIMATORS = 200
#: Q1-Q5, defined in _common.py (bench_recursive.py runs them too).
DATASETS = SELECTION_DATASETS
SELECTORS = (
    "sklearn_fimp ImportanceSelector",
    "BorutaPy",
    "sklearn_fimp ImportanceSelector() (default)",
    "sklearn_fimp ImportanceSelector(HistGradientBoosting)",
    "sklearn_fimp ImportanceSelector() with 15-tree rounds",
    "feature-engine ProbeFeatureSelection",
    "feature-engine SelectByShuffling",
    "SelectFromModel(threshold='mean')",
    "single random column",
)
#: The optional peer each selector needs.
PEERS = {
    SELECTORS[1]: "boruta",
    SELECTORS[5]: "feature_engine",
    SELECTORS[6]: "feature_engine",
}
#: --quick: small data sets, one seed, forests of a few trees.
QUICK = {
    "datasets": ["Q3", "Q5"],
    "seeds": [0],
    "trees": 10,
    "boosting_iterations": 10,
}
#: Boosting iterations of the HistGradientBoosting model (its default;
#: --quick: fewer).
BOOSTING_ITERATIONS = 100


# --------------------------------------------------------------------------
# selectors: each returns the selected column positions


def forest(task, seed, **params):
    params.setdefault("n_estimators", N_ESTIMATORS)
    return _forest(task, seed, **params)


def as_frame(X):
    return pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])


def ours(X, y, task, seed):
    # 10 rounds (the default) of 60 of the 200 trees (round_trees="auto")
    selector = ImportanceSelector(forest(task, seed), random_state=seed).fit(X, y)
    return selector.get_support(indices=True)


def ours_default(X, y, task, seed):
    # estimator=None: scikit-learn's default forest, 30-tree rounds and a
    # 100-tree refit
    selector = ImportanceSelector(random_state=seed).fit(X, y)
    return selector.get_support(indices=True)


#: Trees of each round's forest of the default selector's cheaper variant.
CHEAP_ROUND_TREES = 15


def ours_default_cheaper(X, y, task, seed):
    # the default with 15-tree rounds instead of 30: the cost and power
    # trade-off (its refit keeps scikit-learn's default 100 trees)
    selector = ImportanceSelector(round_trees=CHEAP_ROUND_TREES, random_state=seed)
    return selector.fit(X, y).get_support(indices=True)


def hist_boosting(task, seed):
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
    )

    model = (
        HistGradientBoostingRegressor
        if task == "regression"
        else HistGradientBoostingClassifier
    )
    return model(max_iter=BOOSTING_ITERATIONS, random_state=seed)


def ours_boosted(X, y, task, seed):
    # method="auto": permutation on a held-out fifth, 10 rounds
    model = hist_boosting(task, seed)
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
            ours_default,
            ours_boosted,
            ours_default_cheaper,
            probe_feature_selection,
            select_by_shuffling,
            select_from_model,
            single_random_column,
        ),
    )
)


#: The model one plain fit of which is each of our selectors' unit of cost
#: (the model it wraps; for the default, scikit-learn's default forest),
#: timed on the same data in the same run.
PLAIN_MODELS = {
    SELECTORS[0]: forest,
    SELECTORS[2]: lambda task, seed: forest(task, seed, n_estimators=100),
    SELECTORS[3]: hist_boosting,
    SELECTORS[4]: lambda task, seed: forest(task, seed, n_estimators=100),
}


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
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    seconds, selected = timed(partial(RUNNERS[name], X, y, task, seed))
                    plain = np.nan
                    if name in PLAIN_MODELS:
                        model = PLAIN_MODELS[name](task, seed)
                        plain, _ = timed(partial(model.fit, X, y))
                measured.append((*scores(selected, relevant), seconds, plain))
                print(
                    f"{key} seed {seed} {name}: selected "
                    f"{sorted(int(i) for i in selected)} in {seconds:.1f} s"
                    + (f" ({seconds / plain:.1f} plain fits)" if plain > 0 else ""),
                    flush=True,
                )
            precision, recall, f1, seconds, plain = np.mean(measured, axis=0)
            rows.append((key, label, name, precision, recall, f1, seconds, plain))
    return rows


# --------------------------------------------------------------------------
# reporting


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


def cost_rows(rows, datasets):
    """Per dataset and selector of ours: seconds, seconds of one plain fit
    of its model, plain fits, BorutaPy's seconds and the ratio; then, per
    selector, the totals over the datasets that BorutaPy ran on too."""
    by = {(r[0], r[2]): r for r in rows}
    out, totals = [], {}
    for name in PLAIN_MODELS:
        for d in datasets:
            if (d, name) not in by:
                continue
            seconds, plain = by[(d, name)][6], by[(d, name)][7]
            boruta = by.get((d, "BorutaPy"), (np.nan,) * 8)[6]
            out.append((d, name, seconds, plain, seconds / plain, boruta))
            if boruta == boruta:
                total = totals.setdefault(name, [0.0, 0.0])
                total[0] += seconds
                total[1] += boruta
    return out, totals


def table_text(rows, datasets):
    body = [
        [
            label,
            name,
            f"{precision:.2f}",
            f"{recall:.2f}",
            f"{f1:.2f}",
            f"{seconds:.1f}",
        ]
        for _, label, name, precision, recall, f1, seconds, _ in rows
    ]
    means, ratios = summary(rows, datasets)
    out = [text_table(["dataset", "selector", "prec", "rec", "F1", "s"], body), ""]
    out.append("mean F1 over " + ", ".join(datasets) + ":")
    out.extend(f"  {name:<38} {f1:.3f}" for name, f1 in means)
    out.append("sklearn_fimp time / BorutaPy time:")
    out.extend(f"  {d}: {ratio:.2f}" for d, ratio in ratios)
    costs, totals = cost_rows(rows, datasets)
    out.append("cost (seconds, plain fits of the selector's model, BorutaPy):")
    out.extend(
        f"  {d} {name}: {seconds:.1f} s, {fits:.1f} plain fits, BorutaPy {boruta:.1f} s"
        for d, name, seconds, _, fits, boruta in costs
    )
    out.extend(
        f"  total {name}: {mine:.1f} s against BorutaPy's {theirs:.1f} s"
        for name, (mine, theirs) in totals.items()
    )
    return "\n".join(out)


def rst(rows, datasets, seeds, command, skipped):
    means, ratios = summary(rows, datasets)
    lines = [
        *written_by("bench_selection.py"),
        *heading("Benchmark: selecting features with known relevant ones"),
        "",
        f"- date: {utc_stamp()}",
        f"- cores (os.cpu_count()): {os.cpu_count()}; every model with "
        "n_jobs=None (one core)",
        "- "
        + versions(
            "numpy",
            "scikit-learn",
            "pandas",
            "sklearn_fimp",
            "boruta",
            "feature-engine",
        ),
        f"- seeds: {', '.join(map(str, seeds))}; precision, recall, F1 of the "
        "selected set and seconds of fit are means over the seeds",
        "",
        *reproduce(command),
        "The datasets and the settings of every selector are described at the "
        "top of ``bench/bench_selection.py``.",
        "",
    ]
    if skipped:
        lines += [f"Not run: {skipped}", ""]
    lines += list_table(
        "Selection quality and time",
        ["Dataset", "Selector", "Precision", "Recall", "F1", "Time (s)"],
        [
            [
                label,
                name,
                f"{precision:.2f}",
                f"{recall:.2f}",
                f"{f1:.2f}",
                f"{seconds:.1f}",
            ]
            for _, label, name, precision, recall, f1, seconds, _ in rows
        ],
    )
    lines += [""] + list_table(
        "Mean F1 over " + ", ".join(datasets),
        ["Selector", "Mean F1"],
        [[name, f"{f1:.3f}"] for name, f1 in means],
    )
    if ratios:
        lines += [""] + list_table(
            "Time of ImportanceSelector relative to BorutaPy",
            ["Dataset", "sklearn_fimp time / BorutaPy time"],
            [[d, f"{ratio:.2f}"] for d, ratio in ratios],
        )
    costs, totals = cost_rows(rows, datasets)
    if costs:
        lines += [
            "",
            "**Cost.** A plain fit is one ``fit`` of the model the selector "
            "wraps, on the same rows, timed in the same run right after the "
            "selector (for ``ImportanceSelector()``, scikit-learn's default "
            "forest, ``RandomForest*()``: 100 trees); plain fits = the "
            "selector's seconds / the plain fit's, means over the seeds. The "
            "selector's time includes its refit on the selected columns. "
            "Each round fits 30% of a forest's trees (``round_trees='auto'``: "
            "60 of 200, 30 of 100) on the features and as many probe columns; "
            "before ``round_trees``, each round of ``ImportanceSelector`` fitted "
            "the whole forest it wraps (15-20 plain fits on these data sets).",
            "",
        ]
        lines += list_table(
            "Cost of a selector fit: plain fits of its model, and BorutaPy",
            [
                "Dataset",
                "Selector",
                "Time (s)",
                "Plain fit (s)",
                "Plain fits",
                "BorutaPy (s)",
                "Time / BorutaPy",
            ],
            [
                [
                    d,
                    name,
                    f"{seconds:.1f}",
                    f"{plain:.2f}",
                    f"{fits:.1f}",
                    f"{boruta:.1f}",
                    f"{seconds / boruta:.2f}",
                ]
                for d, name, seconds, plain, fits, boruta in costs
            ],
        )
        lines += [""] + list_table(
            "Total time over the datasets, against BorutaPy's",
            ["Selector", "Total (s)", "BorutaPy total (s)", "Ratio"],
            [
                [name, f"{mine:.1f}", f"{theirs:.1f}", f"{mine / theirs:.2f}"]
                for name, (mine, theirs) in totals.items()
            ],
        )
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
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run in seconds: Q3 and Q5, seed 0, forests of "
        f"{QUICK['trees']} trees (all of them in each round of ours); "
        "prints the page instead of writing it",
    )
    return parser.parse_args(argv)


def main(argv=None):
    global N_ESTIMATORS, BOOSTING_ITERATIONS
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.quick:
        N_ESTIMATORS = QUICK["trees"]
        BOOSTING_ITERATIONS = QUICK["boosting_iterations"]
        args.datasets, args.seeds = QUICK["datasets"], QUICK["seeds"]
    datasets = list(args.datasets)
    skipped = []
    if "Q5" in datasets and rent_missing(args.data):
        skipped.append(
            f"Q5: the rent data was not found at {args.data} (pass --data "
            "PATH/rent.csv)."
        )
        skip("Q5", rent_missing(args.data))
        datasets.remove("Q5")
    selectors = []
    for name in (SELECTORS[i] for i in args.selectors):
        why = PEERS.get(name) and missing(PEERS[name])
        if why:
            skip(name, why)
            skipped.append(f"{name}: {why}.")
        else:
            selectors.append(name)
    rows = run(datasets, args.seeds, args.data, selectors)
    print()
    print(table_text(rows, datasets))
    if not args.no_write:
        page = rst(
            rows,
            datasets,
            args.seeds,
            command_line("bench_selection.py", argv),
            " ".join(skipped),
        )
        write_page(DOCS_FILE, page, quick=args.quick)


if __name__ == "__main__":
    main()
