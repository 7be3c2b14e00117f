"""How often the selector succeeds on the small versions of issue 41's data
sets that the power tests use (``tests/_power_cases.py``,
``tests/test_power.py``), side by side with BorutaPy.

Each case draws a data set from each seed and asks whether a selection
succeeded on it (``_power_cases.succeeded``: the relevant columns found,
at most one forbidden column kept; blocks: none from a block without a
causal column). The tests run on seeds 0, 1, ...; this script measures on
seeds 100, 101, ... by default, so that the rate behind each test's bound
comes from other data sets than the test's own.

Selectors, each fitted once per data set, one core:

- ours: ``ImportanceSelector(random_state=seed, refit=False)`` with its
  defaults (scikit-learn's default forest), and on the boosted case
  wrapping ``HistGradientBoostingClassifier(max_iter=50,
  random_state=seed)`` as the test does, and LightGBM, XGBoost and
  CatBoost with 50 trees where they are installed (the default forest's row
  beside them);
- BorutaPy: ``BorutaPy(RandomForestClassifier(max_depth=5, n_jobs=1),
  n_estimators="auto", random_state=seed)``, its confirmed features,
  ``max_iter=100`` (its default), as ``bench_power.py`` runs it;
- with ``--tentative-cv``, ours with ``keep_tentative="cv"`` (the default
  forest, every case).

Usage::

    python bench/bench_power_small.py [--seeds 40] [--first 100] [--no-boruta]
    python bench/bench_power_small.py --tentative-cv   # and keep_tentative="cv"
    python bench/bench_power_small.py --quick   # one seed, seconds

It prints one line per data set and a table of success counts; it writes no
page (the counts are quoted next to the bounds in ``tests/test_power.py``).
"""

import argparse
import importlib.util
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _common import missing, skip, text_table, versions
from bench_power import boruta as power_boruta

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests._power_cases import CASES, succeeded  # noqa: E402

#: the boosted model the boosted case wraps (and test_power.py)
BOOSTED_ITERATIONS = 50


def boosted_model(seed, library="sklearn"):
    """HistGradientBoosting (``library="sklearn"``), LightGBM, XGBoost or
    CatBoost with ``BOOSTED_ITERATIONS`` trees, one thread (as
    ``tests/test_power.py``)."""
    if library == "lightgbm":
        from lightgbm import LGBMClassifier

        return LGBMClassifier(
            n_estimators=BOOSTED_ITERATIONS, random_state=seed, n_jobs=1, verbose=-1
        )
    if library == "xgboost":
        from xgboost import XGBClassifier

        return XGBClassifier(
            n_estimators=BOOSTED_ITERATIONS, random_state=seed, n_jobs=1
        )
    if library == "catboost":
        from catboost import CatBoostClassifier

        return CatBoostClassifier(
            iterations=BOOSTED_ITERATIONS,
            random_seed=seed,
            thread_count=1,
            verbose=False,
            allow_writing_files=False,
        )
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(
        max_iter=BOOSTED_ITERATIONS, random_state=seed
    )


def ours(model=None, **params):
    def select(data, seed):
        from sklearn_fimp import ImportanceSelector

        estimator = None if model is None else model(seed)
        selector = ImportanceSelector(
            estimator, **params, random_state=seed, refit=False
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            selector.fit(data.X, data.y)
        return selector.support_

    return select


def boruta(max_iter):
    """BorutaPy as ``bench_power.py`` runs it, on a case's data (every case
    has a binary target)."""
    select = power_boruta(max_iter)
    return lambda data, seed: select(dict(X=data.X, y=data.y, task="binary"), seed)


def selectors(case, boruta_iter, tentative_cv=False):
    out = {}
    if case == "boosted":
        out["ours (HistGradientBoosting)"] = ours(boosted_model)
        for library, name in (
            ("lightgbm", "LightGBM"),
            ("xgboost", "XGBoost"),
            ("catboost", "CatBoost"),
        ):
            if importlib.util.find_spec(library) is not None:
                out[f"ours ({name})"] = ours(
                    lambda seed, library=library: boosted_model(seed, library)
                )
    out["ours"] = ours()
    if tentative_cv:
        out["ours, keep_tentative='cv'"] = ours(keep_tentative="cv")
    if boruta_iter:
        out["BorutaPy"] = boruta(boruta_iter)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40, help="data sets per case")
    parser.add_argument("--first", type=int, default=100, help="the first seed")
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=None)
    parser.add_argument("--no-boruta", action="store_true")
    parser.add_argument(
        "--tentative-cv",
        action="store_true",
        help="also ours with keep_tentative='cv' (its default forest)",
    )
    parser.add_argument("--quick", action="store_true", help="one seed, seconds")
    args = parser.parse_args(argv)
    n_seeds, boruta_iter = (1, 10) if args.quick else (args.seeds, 100)
    if args.no_boruta:
        boruta_iter = 0
    elif missing("boruta"):
        skip("BorutaPy", missing("boruta"))
        boruta_iter = 0
    print(versions("numpy", "scikit-learn", "sklearn_fimp", "boruta"), flush=True)
    seeds = range(args.first, args.first + n_seeds)
    rows = []
    for case in args.cases or list(CASES):
        counts = {}
        for seed in seeds:
            data = CASES[case](seed)
            # quick mode runs every selector, so that the bench test covers it
            chosen = selectors(case, boruta_iter, args.tentative_cv or args.quick)
            for name, select in chosen.items():
                start = time.perf_counter()
                kept = np.asarray(select(data, seed), dtype=bool)
                seconds = time.perf_counter() - start
                ok = succeeded(case, data, kept)
                found = int(kept[data.relevant].sum())
                wrong = int(kept[data.forbidden].sum())
                print(
                    f"{case} seed {seed} {name}: success {ok}, relevant "
                    f"{found}/{len(data.relevant)}, forbidden {wrong}, "
                    f"{seconds:.1f} s",
                    flush=True,
                )
                count = counts.setdefault(name, [0, 0, 0, 0, 0, 0.0])
                count[0] += 1
                count[1] += ok
                count[2] += found
                count[3] += wrong
                count[4] += wrong > 0
                count[5] += seconds
        for name, (n, ok, found, wrong, any_wrong, seconds) in counts.items():
            rows.append(
                [
                    case,
                    name,
                    n,
                    f"{ok} / {n}",
                    f"{found / n:.2f} / {len(data.relevant)}",
                    f"{wrong / n:.2f} ({any_wrong})",
                    f"{seconds / n:.1f}",
                ]
            )
    header = [
        "Case",
        "Selector",
        "Data sets",
        "Succeeded",
        "Relevant kept",
        "Forbidden kept (data sets with any)",
        "Seconds",
    ]
    print(f"\nseeds {seeds.start}-{seeds.stop - 1} (means per data set)")
    print(text_table(header, rows))


if __name__ == "__main__":
    main()
