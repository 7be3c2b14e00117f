"""Benchmark of conditional_permutation_importance.

Measures, in one run:

1. **Sampler choice.** The forest and the linear sampler on two relations
   between a cause of y and a stand-in the target does not use (the
   stand-in is the cause plus noise, or exp(cause) plus noise), over
   ``--datasets`` simulated data sets (1,000 rows, half to fit a
   RandomForestRegressor(n_estimators=50), half to measure; y = cause +
   noise; a fourth column of pure noise). Reported: the stand-in's mean
   conditional importance (the truth is 0), how often the stand-in and the
   pure-noise column get p <= 0.05 (a valid test: about 5%), how often
   the cause does (power), and the seconds per call.
2. **Speed against drop-column importance** on W2-like data:
   make_classification(n_samples=100_000, n_features=50, n_informative=10,
   n_redundant=10, random_state=0) (``--rows`` sets n_samples), one 80/20
   split, RandomForestClassifier(n_estimators=100, min_samples_leaf=5,
   random_state=0). Conditional importance: the model's fit plus the call
   on the held-out rows (every feature, ``n_repeats=5``).
   Drop-column importance: the baseline plus one refit per feature on the
   same split; with ``--drop-features k < 50``, only k refits are run and
   the time of all 51 fits is the measured time per fit times 51 (said in
   the table). Ordinary permutation importance (the tree engine) is shown
   for scale.

Run from the repository root::

    PYTHONPATH=. python bench/bench_conditional.py
    PYTHONPATH=. python bench/bench_conditional.py --quick   # seconds, no docs

Every call runs with ``n_jobs=1`` and is timed in CPU seconds of the
process (time.process_time), so that the ratios hold on a shared machine
whose load changes during the run; the load average at the start is
recorded.
"""

import argparse
import os
import sys
from functools import partial

import numpy as np
from _common import (
    DOCS,
    command_line,
    cpu_timed,
    git_commit,
    heading,
    list_table,
    utc_stamp,
    versions,
    write_page,
)
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.model_selection import train_test_split

from sklearn_fimp import (
    conditional_permutation_importance,
    drop_column_importance,
    permutation_importance,
)

DOCS_TABLE = DOCS / "bench_conditional.rst"
#: --quick: the columns of the W2-like data (of 1,000 rows)
QUICK_FEATURES = 24


def stand_in_data(relation, seed, n_rows=1000):
    """cause, stand-in (not used by y), a second cause, pure noise."""
    rng = np.random.RandomState(seed)
    cause = rng.normal(size=n_rows)
    if relation == "linear":
        stand_in = cause + rng.normal(scale=0.5, size=n_rows)
    else:
        stand_in = np.exp(cause) + rng.normal(scale=0.3, size=n_rows)
    X = np.column_stack(
        [cause, stand_in, rng.normal(size=n_rows), rng.normal(size=n_rows)]
    )
    y = cause + 0.5 * X[:, 2] + rng.normal(scale=0.5, size=n_rows)
    return X, y


def sampler_choice(n_datasets, n_rows=1000, trees=50):
    rows = []
    for relation in ("linear", "exp"):
        for sampler in ("forest", "linear"):
            stand_in, rejected, seconds = [], np.zeros(4), 0.0
            for seed in range(n_datasets):
                X, y = stand_in_data(relation, seed, n_rows)
                half = X.shape[0] // 2
                model = RandomForestRegressor(
                    n_estimators=trees, random_state=seed, n_jobs=1
                ).fit(X[:half], y[:half])
                cpu, _, result = cpu_timed(
                    partial(
                        conditional_permutation_importance,
                        model,
                        X[half:],
                        y[half:],
                        sampler=sampler,
                        n_jobs=1,
                        random_state=seed,
                    )
                )
                seconds += cpu
                stand_in.append(result.importances_mean[1])
                rejected += result.pvalues <= 0.05
            rows.append(
                {
                    "relation": relation,
                    "sampler": sampler,
                    "stand_in_importance": float(np.mean(stand_in)),
                    "stand_in_rejected": int(rejected[1]),
                    "noise_rejected": int(rejected[3]),
                    "cause_rejected": int(rejected[0]),
                    "n_datasets": n_datasets,
                    "seconds": seconds / n_datasets,
                }
            )
            print(rows[-1], flush=True)
    return rows


def speed(quick, drop_features, n_samples):
    n_samples = 1_000 if quick else n_samples
    X, y = make_classification(
        n_samples=n_samples,
        n_features=QUICK_FEATURES if quick else 50,
        n_informative=10,
        n_redundant=10,
        random_state=0,
    )
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.2, random_state=0, stratify=y
    )
    model = RandomForestClassifier(
        n_estimators=20 if quick else 100,
        min_samples_leaf=5,
        random_state=0,
        n_jobs=1,
    )
    fit_seconds, _, fitted = cpu_timed(lambda: clone(model).fit(X_train, y_train))
    print(f"fit: {fit_seconds:.1f} s", flush=True)

    conditional_seconds, _, conditional = cpu_timed(
        lambda: conditional_permutation_importance(
            fitted, X_test, y_test, n_repeats=5, n_jobs=1, random_state=0
        )
    )
    print(f"conditional: {conditional_seconds:.1f} s", flush=True)

    permutation_seconds, _, _ = cpu_timed(
        lambda: permutation_importance(
            fitted, X_test, y_test, n_repeats=5, n_jobs=1, random_state=0
        )
    )
    print(f"permutation: {permutation_seconds:.1f} s", flush=True)

    n_train = X_train.shape[0]
    split = [(np.arange(n_train), np.arange(n_train, n_samples))]
    X_all, y_all = np.vstack([X_train, X_test]), np.concatenate([y_train, y_test])
    drop_features = min(drop_features, X.shape[1])
    drop_measured, _, _ = cpu_timed(
        lambda: drop_column_importance(
            model,
            X_all,
            y_all,
            cv=split,
            groups=list(range(drop_features)),
            ungrouped="drop",
            n_jobs=1,
            random_state=0,
        )
    )
    n_fits = drop_features + 1
    drop_seconds = drop_measured / n_fits * (X.shape[1] + 1)
    print(
        f"drop-column: {drop_measured:.1f} s for {n_fits} fits, "
        f"{drop_seconds:.1f} s for all {X.shape[1] + 1}",
        flush=True,
    )
    return {
        "n_samples": n_samples,
        "fit": fit_seconds,
        "conditional": conditional_seconds,
        "permutation": permutation_seconds,
        "drop_measured": drop_measured,
        "drop_fits": n_fits,
        "drop_all": drop_seconds,
        "drop_extrapolated": n_fits < X.shape[1] + 1,
        "conditional_top": [
            int(i) for i in np.argsort(-conditional.importances_mean)[:10]
        ],
    }


def page(choice, timing, load, command):
    """The page: the sampler choice and the speed against drop-column."""
    lines = [
        ".. _bench_conditional:",
        "",
        *heading("Conditional permutation importance"),
        "",
        f"Measured by ``bench/bench_conditional.py`` on "
        f"{utc_stamp()[:10]} at commit {git_commit()}, "
        f"{versions('scikit-learn', 'sklearn_fimp')}, {os.cpu_count()} cores "
        f"(load average {load:.1f} at the start: the machine was shared).",
        "",
        "Command::",
        "",
        f"    {command}",
        "",
        *heading("Sampler choice", "-"),
        "",
        f"{choice[0]['n_datasets']} data sets per row: y = cause + 0.5 x2 + "
        "noise; the stand-in is the cause plus noise (linear) or exp(cause) "
        "plus noise (exp), and y does not use it; x3 is pure noise. Counts "
        "of p <= 0.05 (a valid test rejects a null feature about 5% of the "
        "time).",
        "",
    ]
    lines += list_table(
        None,
        [
            "relation",
            "sampler",
            "stand-in importance (truth 0)",
            "stand-in p <= 0.05",
            "noise p <= 0.05",
            "cause p <= 0.05",
            "seconds per call",
        ],
        [
            [
                row["relation"],
                row["sampler"],
                f"{row['stand_in_importance']:.4f}",
                f"{row['stand_in_rejected']} of {row['n_datasets']}",
                f"{row['noise_rejected']} of {row['n_datasets']}",
                f"{row['cause_rejected']} of {row['n_datasets']}",
                f"{row['seconds']:.2f}",
            ]
            for row in choice
        ],
    )
    drop_note = (
        f" ({timing['drop_fits']} of the 51 fits run, "
        f"{timing['drop_measured']:.0f} s; the rest at the same time per fit)"
        if timing["drop_extrapolated"]
        else ""
    )
    conditional_total = timing["fit"] + timing["conditional"]
    body = [
        [
            "drop-column importance (baseline + 50 refits)" + drop_note,
            f"{timing['drop_all']:.0f}",
            "1.0",
        ],
        [
            "conditional importance (one fit + the call)",
            f"{conditional_total:.0f}",
            f"{timing['drop_all'] / conditional_total:.1f}",
        ],
        [
            "conditional importance (the call, model already fitted)",
            f"{timing['conditional']:.0f}",
            f"{timing['drop_all'] / timing['conditional']:.1f}",
        ],
    ]
    if "permutation" in timing:
        body.append(
            [
                "ordinary permutation importance (the call, tree engine)",
                f"{timing['permutation']:.0f}",
                f"{timing['drop_all'] / timing['permutation']:.1f}",
            ]
        )
    lines += [
        "",
        *heading("Speed against drop-column importance", "-"),
        "",
        f"W2-like, {timing['n_samples']:,} rows x 50 features "
        "(make_classification, 10 informative, 10 redundant), 80/20 split, "
        "RandomForestClassifier(n_estimators=100, min_samples_leaf=5); every "
        "feature, 5 repeats, n_jobs=1, CPU seconds of the process "
        "(time.process_time).",
        "",
        *list_table(None, ["what", "CPU seconds", "drop-column / this"], body),
    ]
    ratio = timing["drop_all"] / conditional_total
    lines += [
        "",
        f"At {timing['n_samples']:,} rows, conditional importance (the model's "
        f"fit and the call) costs 1/{ratio:.1f} of drop-column importance. "
        "The call fits one forest sampler per feature (as many trees as leave "
        "each held-out row out of bag for about 17 of them) and scores the "
        "draws with the tree engine, which re-routes only the rows whose "
        "paths split on a replaced column.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run in seconds (2 data sets of 300 rows, 10-tree "
        f"forests; W2-like data of 1,000 rows x {QUICK_FEATURES} columns, 2 "
        "refits of drop-column); prints the page instead of writing it",
    )
    parser.add_argument("--datasets", type=int, default=20)
    parser.add_argument(
        "--drop-features",
        type=int,
        default=50,
        help="refits of drop-column actually run (the rest extrapolated)",
    )
    parser.add_argument("--skip-choice", action="store_true")
    parser.add_argument(
        "--rows", type=int, default=100_000, help="rows of the W2-like data"
    )
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    if args.skip_choice:
        choice = []
    elif args.quick:
        choice = sampler_choice(2, n_rows=300, trees=10)
    else:
        choice = sampler_choice(args.datasets)
    timing = speed(args.quick, 2 if args.quick else args.drop_features, args.rows)
    print(timing)
    if choice:
        command = command_line("bench_conditional.py", argv, pythonpath=True)
        write_page(DOCS_TABLE, page(choice, timing, load, command), quick=args.quick)


if __name__ == "__main__":
    sys.exit(main())
