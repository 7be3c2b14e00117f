"""Which informative columns the selectors find on wide data, and which
they miss: ImportanceSelector against BorutaPy on the calibration page's
wide classification, its informative columns split by what tells the
classes apart along them.

Data: ``make_classification(600, 300, n_informative=8, n_redundant=0,
shuffle=False)`` (bench_calibration.py's power regime wide-classification),
seeds 100-107 by default. make_classification draws 4 clusters, 2 per
class, each centred on a vertex of the cube {-1, +1}^8 of the informative
columns, and mixes those columns within each cluster by a random matrix;
without shuffling, rows 150 k to 150 k + 149 are cluster k, of class k % 2.
An informative column is

- "mean shift" when the two classes' centres differ along it (class 0's
  clusters at +1 and +1, class 1's at -1 and +1, say): the classes' means
  differ along the column;
- "no mean shift" when the two classes have the same centres along it
  ({+1, -1} and {+1, -1}, or all four equal): the classes' means are
  equal, and the column tells them apart only together with other columns
  (which cluster a row is in) or through the clusters' spreads.

The centres are read from the data: the sign of each cluster's mean along
the column (a centre is -1 or +1, and a cluster's mean on its 150 rows
lies within a few tenths of it; the script refuses a data set where a mean
is nearer 0 than 0.5).

Selectors, as on the calibration page (alpha=0.05, Holm, min_features=0):

- ImportanceSelector's default rounds: ``ImportanceSelector(alpha=0.05,
  min_features=0, refit=False, random_state=seed)``, i.e. scikit-learn's
  default forest with 30 trees in each of 10 rounds;
- 100-tree rounds: the same with ``RandomForestClassifier(n_estimators=100,
  random_state=seed)`` and ``round_trees=None`` (the page's '10 x 100');
- forests that weigh 30% of the columns at each split (``max_features=0.3``
  instead of the classifier's default, the square root of the number of
  columns), for columns that matter only jointly with others: a split on
  one of them gains little until the tree has split on the others, so the
  more columns a split weighs, the likelier it is to be taken.
  ``RandomForestClassifier(n_estimators=200, max_features=0.3,
  random_state=seed)`` with ``round_trees="auto"`` (60 trees per round),
  and ``RandomForestClassifier(n_estimators=100, max_features=0.3,
  random_state=seed)`` fitted whole in each of ``n_rounds=20`` rounds;
- BorutaPy: ``BorutaPy(RandomForestClassifier(max_depth=5),
  n_estimators="auto", alpha=0.05, max_iter=50, random_state=seed)``,
  confirmed features only.

Reported: for each selector, the informative columns of each kind it kept,
the data sets where it kept noise, and its mean F1; and the F1 of a
selector that kept every "mean shift" column and nothing else.

Run from the repository root::

    python bench/bench_wide_power.py              # seeds 100-107, writes the page
    python bench/bench_wide_power.py --no-boruta --no-write
    python bench/bench_wide_power.py --quick      # seconds; prints the page

The table is printed and written to ``docs/bench_wide_power.rst``.
"""

import argparse
import sys
import warnings

import numpy as np
from _common import (
    DOCS,
    WIDE_CLUSTERS,
    WIDE_INFORMATIVE,
    command_line,
    git_commit,
    heading,
    list_table,
    load_average,
    missing,
    reproduce,
    skip,
    text_table,
    timed,
    utc_stamp,
    versions,
    wide_classification,
    write_page,
    written_by,
)
from sklearn.ensemble import RandomForestClassifier

from sklearn_fimp import ImportanceSelector

DOCS_FILE = DOCS / "bench_wide_power.rst"
ALPHA = 0.05
FIRST_SEED = 100
SHIFT, NO_SHIFT = "mean shift", "no mean shift"
#: --quick: one data set, 10-tree rounds
QUICK = {"seeds": 1, "trees": 10}


def column_kinds(X, y):
    """For each informative column, SHIFT or NO_SHIFT (see the module's
    docstring), from the sign of each cluster's mean along it."""
    n_rows = len(y) // WIDE_CLUSTERS
    clusters = np.arange(len(y)) // n_rows
    centres = np.array(
        [X[clusters == k, :WIDE_INFORMATIVE].mean(axis=0) for k in range(WIDE_CLUSTERS)]
    )
    if np.abs(centres).min() < 0.5:
        raise RuntimeError(
            "a cluster's mean lies nearer 0 than 0.5: the rows are not in "
            "make_classification's cluster order (shuffle=False)"
        )
    # cluster k is of class k % 2 (make_classification's order; 1% of its
    # labels are flipped)
    majority = [np.bincount(y[clusters == k]).argmax() for k in range(WIDE_CLUSTERS)]
    if majority != [k % 2 for k in range(WIDE_CLUSTERS)]:
        raise RuntimeError(f"the clusters' classes are {majority}, not 0, 1, 0, 1")
    signs = np.sign(centres)
    kinds = []
    for j in range(WIDE_INFORMATIVE):
        first = sorted(signs[0::2, j])  # clusters 0 and 2: class 0
        second = sorted(signs[1::2, j])  # clusters 1 and 3: class 1
        kinds.append(NO_SHIFT if first == second else SHIFT)
    return np.array(kinds)


def ours(trees=None, round_trees=None, n_rounds=10, **forest):
    """ImportanceSelector as the calibration page runs it: its default
    estimator (trees=None), or a ``trees``-tree forest with ``forest``'s
    parameters and ``round_trees``; ``n_rounds`` rounds."""

    def select(X, y, seed):
        settings = dict(
            alpha=ALPHA,
            min_features=0,
            refit=False,
            n_rounds=n_rounds,
            random_state=seed,
        )
        if trees is not None:
            settings["estimator"] = RandomForestClassifier(
                n_estimators=trees, random_state=seed, **forest
            )
            settings["round_trees"] = round_trees
        return ImportanceSelector(**settings).fit(X, y).get_support()

    return select


def boruta(X, y, seed):
    from boruta import BorutaPy

    selector = BorutaPy(
        RandomForestClassifier(max_depth=5, random_state=seed),
        n_estimators="auto",
        alpha=ALPHA,
        max_iter=50,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        selector.fit(X, y)
    return np.asarray(selector.support_, dtype=bool)


def f1(kept, informative):
    found = (kept & informative).sum()
    return 2 * found / (kept.sum() + informative.sum())


def run(seeds, selectors):
    """One row per (seed, selector): the kinds' counts and what it kept."""
    rows = []
    for seed in seeds:
        X, y, informative = wide_classification(np.random.RandomState(seed))
        kinds = column_kinds(X, y)
        for name, select in selectors.items():
            seconds, kept = timed(
                lambda select=select, X=X, y=y, seed=seed: select(X, y, seed)
            )
            row = {
                "seed": seed,
                "selector": name,
                "seconds": seconds,
                "f1": f1(kept, informative),
                "noise": int((kept & ~informative).sum()),
            }
            for kind in (SHIFT, NO_SHIFT):
                row[kind] = int((kinds == kind).sum())
                row[kind + " kept"] = int(kept[:WIDE_INFORMATIVE][kinds == kind].sum())
            rows.append(row)
            print(
                f"seed {seed}  {name:<28} {row[SHIFT + ' kept']}/{row[SHIFT]} "
                f"{SHIFT}, {row[NO_SHIFT + ' kept']}/{row[NO_SHIFT]} {NO_SHIFT}, "
                f"noise {row['noise']}, F1 {row['f1']:.3f}, {seconds:.1f} s",
                flush=True,
            )
    return rows


def summary(rows, names):
    """Per selector: kept / total of each kind, data sets with noise kept,
    mean F1, mean seconds; and the F1 of keeping every SHIFT column only."""
    table = []
    for name in names:
        mine = [row for row in rows if row["selector"] == name]
        cells = [name]
        for kind in (SHIFT, NO_SHIFT):
            kept = sum(row[kind + " kept"] for row in mine)
            total = sum(row[kind] for row in mine)
            cells.append(f"{kept} / {total} ({kept / total:.2f})" if total else "-")
        cells += [
            f"{sum(row['noise'] > 0 for row in mine)} / {len(mine)}",
            f"{np.mean([row['f1'] for row in mine]):.3f}",
            f"{np.mean([row['seconds'] for row in mine]):.1f}",
        ]
        table.append(cells)
    first = [row for row in rows if row["selector"] == names[0]]
    shift_only = np.mean(
        [2 * row[SHIFT] / (row[SHIFT] + WIDE_INFORMATIVE) for row in first]
    )
    return table, shift_only


HEADER = [
    "Selector",
    f"'{SHIFT}' columns kept",
    f"'{NO_SHIFT}' columns kept",
    "Data sets with noise kept",
    "F1 (mean)",
    "Seconds per data set",
]


def page(rows, names, command, seeds, skipped):
    table, shift_only = summary(rows, names)
    lines = written_by("bench_wide_power.py")
    lines += heading("Benchmark: the informative columns selectors miss on wide data")
    lines += [
        "",
        f"- date: {utc_stamp()}, commit {git_commit(changed='+ local changes')}",
        "- " + versions("numpy", "scikit-learn", "sklearn_fimp", "boruta"),
        f"- seeds: {seeds[0]}-{seeds[-1]}; one core; load average (1, 5, 15 min) "
        f"when the run ended: {load_average()}",
        "",
    ]
    lines += reproduce(command)
    lines += [
        "The data is the calibration page's wide classification, "
        "``make_classification(600, 300, n_informative=8, n_redundant=0, "
        "shuffle=False)``: 8 informative columns and 292 noise columns. Its "
        "two classes are two clusters each, centred on vertices of the cube "
        "{-1, +1}^8 of the informative columns. Along a 'mean shift' column "
        "the classes' centres differ, so their means do; along a 'no mean "
        "shift' column both classes have the same centres (one cluster at -1 "
        "and one at +1 in each class, or all four on one side), so the "
        "classes' means are equal and the column tells them apart only "
        "together with other columns or through the clusters' spreads. The "
        "script reads the centres from the data (the sign of each cluster's "
        "mean along the column).",
        "",
        "Selectors (alpha=0.05 with Holm's correction, as on the calibration "
        "page; the settings in full at the top of ``bench/bench_wide_power.py``"
        "): ImportanceSelector with its default estimator ('default', "
        "scikit-learn's forest with 30 trees per round), with 10 rounds of a "
        "whole 100-tree RandomForestClassifier ('100-tree rounds'), wrapping "
        "``RandomForestClassifier(n_estimators=200, max_features=0.3)`` (60 of "
        "its trees per round), and with 20 rounds of a whole 100-tree forest "
        "with ``max_features=0.3``; and BorutaPy at the calibration page's "
        "settings. ``max_features=0.3`` weighs 30% of the columns at each "
        "split instead of the square root of their number (24 of the 600 "
        "columns a round fits): a split on a column that only matters "
        "together with others gains little until the tree has split on the "
        "others, and a split that weighs more columns is likelier to take it.",
        "",
    ]
    if skipped:
        lines += [f"Not run: {skipped}", ""]
    lines += list_table("Informative columns kept, by kind", HEADER, table)
    lines += [
        "",
        "A selector that kept every 'mean shift' column and nothing else "
        f"would reach F1 {shift_only:.3f} on these data sets.",
        "",
    ]
    per_seed = []
    for seed in seeds:
        mine = [row for row in rows if row["seed"] == seed]
        cells = [str(seed), f"{mine[0][SHIFT]} / {mine[0][NO_SHIFT]}"]
        cells += [
            f"{row[SHIFT + ' kept']} / {row[NO_SHIFT + ' kept']} / {row['noise']}"
            for row in mine
        ]
        per_seed.append(cells)
    lines += list_table(
        "Per data set: columns of each kind, and 'mean shift' / 'no mean shift' "
        "/ noise columns kept",
        ["Seed", "Mean shift / no mean shift", *names],
        per_seed,
    )
    return "\n".join(lines) + "\n"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seeds", type=int, default=8, help=f"data sets: seeds {FIRST_SEED} on"
    )
    parser.add_argument("--no-boruta", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="one data set, 10-tree rounds; prints the page instead of writing it",
    )
    return parser.parse_args(argv)


def main(argv=None):
    argv = argv if argv is not None else sys.argv[1:]
    args = parse_args(argv)
    command = command_line("bench_wide_power.py", argv)
    n_seeds = QUICK["seeds"] if args.quick else args.seeds
    seeds = list(range(FIRST_SEED, FIRST_SEED + n_seeds))
    trees = QUICK["trees"] if args.quick else 100
    # ImportanceSelector unless named otherwise (the page says so)
    selectors = {
        "default (30-tree rounds)": ours(),
        f"{trees}-tree rounds": ours(trees),
        f"{2 * trees}-tree forest, max_features=0.3": ours(
            2 * trees, round_trees="auto", max_features=0.3
        ),
        f"20 rounds of {trees} trees, max_features=0.3": ours(
            trees, n_rounds=20, max_features=0.3
        ),
    }
    skipped = ""
    why = "--no-boruta" if args.no_boruta else missing("boruta")
    why = "--quick" if args.quick else why
    if why:
        skipped = f"BorutaPy ({why})."
        skip("BorutaPy", why)
    else:
        selectors["BorutaPy"] = boruta
    rows = run(seeds, selectors)
    names = list(selectors)
    table, shift_only = summary(rows, names)
    print()
    print(text_table(HEADER, table))
    print(f"\nkeeping every '{SHIFT}' column and nothing else: F1 {shift_only:.3f}")
    if not args.no_write:
        write_page(
            DOCS_FILE, page(rows, names, command, seeds, skipped), quick=args.quick
        )


if __name__ == "__main__":
    main()
