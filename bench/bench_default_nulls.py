"""What the default ImportanceSelector keeps where nothing is to be found.

``bench_calibration.py`` measures the probe test itself: it re-decides
from each fit's histories, with ``keep_tentative=False``. This script fits
the selector as a user does, with its defaults (``method="auto"``,
``keep_tentative="auto"``, whose score guard adds features by
significance where the kept ones lose more than 5% of what all
features gain over a constant prediction) but
``min_features=0`` (the default keeps the top feature whatever the test
says, and warns), on the null regimes of ``bench_calibration.py`` (every
column noise), and counts the data sets in which it kept any column: the
family-wise error of the whole default, which its false discovery rate
bounds on a null (every kept column is a false discovery), against the
same fits with ``keep_tentative=False``, and how often the guard ran.

Reproduce from the repository root with::

    OMP_NUM_THREADS=1 python bench/bench_default_nulls.py --seeds 5

Each fit's row goes to ``bench/bench_default_nulls_rows.jsonl``; the page
``docs/bench_default_nulls.rst`` is written from all of them.
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_calibration import (  # noqa: E402
    ALPHA,
    DEPENDENT,
    REGIMES,
    make_data,
    ordinal,
    tree_model,
)

from sklearn_fimp._selection._deciding._score_cost import SCORE_LOSS  # noqa: E402

ROWS = HERE / "bench_default_nulls_rows.jsonl"
PAGE = HERE.parent / "docs" / "bench_default_nulls.rst"
MODELS = ("forest", "hgb", "lightgbm", "xgboost", "catboost")
#: the models' trees: 100, the default of the forest, HistGradientBoosting,
#: LightGBM and XGBoost (CatBoost's default is 1,000)
TREES = 100


def null_regimes():
    """The regimes of bench_calibration.py in which every column is noise,
    with independent rows (the time-ordered and grouped ones need their
    splitter, which the default does not have)."""
    names = []
    for name in REGIMES:
        if name in DEPENDENT:
            continue
        _, _, informative, _ = make_data(name, 0)
        if not np.any(informative):
            names.append(name)
    return names


def fit(regime, seed, model, trees=TREES, settings=("auto", False)):
    """One null data set fitted by the default selector (min_features=0)
    and by the same with keep_tentative=False (of ``settings``, those
    given): a row."""
    from sklearn_fimp import ImportanceSelector

    X, y, _, task = make_data(regime, seed)
    X = ordinal(X)
    row = dict(regime=regime, seed=seed, model=model, rows=len(y), columns=X.shape[1])
    for setting in settings:
        selector = ImportanceSelector(
            tree_model(model, task, seed, trees),
            keep_tentative=setting,
            min_features=0,
            refit=False,
            random_state=seed,
        )
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            selector.fit(X, y)
        key = "default" if setting == "auto" else "without"
        row[f"{key}_kept"] = int(selector.support_.sum())
        row[f"{key}_seconds"] = time.perf_counter() - started
        if setting == "auto":
            row["guard_ran"] = hasattr(selector, "cv_results_")
            cost = selector.selection_score_
            row["lost"] = None if cost is None else cost.lost
    return row


def log_row(path, row):
    """Put ``row`` in the log at ``path``, in place of the row of the same
    data set and model: the log is read again and written whole under a
    lock, so that runs of other models side by side keep their rows."""
    import fcntl

    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        rows = {(r["regime"], r["seed"], r["model"]): r for r in read_rows(path)}
        rows[(row["regime"], row["seed"], row["model"])] = row
        text = "".join(json.dumps(r) + "\n" for r in rows.values())
        Path(f"{path}.tmp").write_text(text)
        os.replace(f"{path}.tmp", path)


def read_rows(path):
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def page(rows, path):
    from sklearn_fimp import __version__

    lines = [
        ":orphan:",
        "",
        ".. This file is written by bench/bench_default_nulls.py; do not edit it.",
        "",
        "Benchmark: what the default selector keeps on null data",
        "========================================================",
        "",
        f"- written: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"Python {platform.python_version()}, sklearn_fimp {__version__}",
        "",
        "Reproduce from the repository root with::",
        "",
        "    OMP_NUM_THREADS=1 python bench/bench_default_nulls.py --seeds 5",
        "",
        "Every column of these data sets is noise (the null regimes of",
        ":doc:`bench_calibration`), so a kept column is a false discovery and "
        "a data set with any kept column is a family-wise error. The default "
        f"``ImportanceSelector`` (``alpha={ALPHA}``, ``method='auto'``, "
        "``keep_tentative='auto'``) is fitted with ``min_features=0`` on each, "
        "and the same with ``keep_tentative=False``; 'guard ran' counts the "
        f"fits in which the kept features lost more than {SCORE_LOSS:.0%} of what all "
        "features gain over a constant prediction (``selection_score_``; a "
        "gain counted only beyond what the same predictions score against "
        "the held-out targets permuted, their mean plus 3.09 standard "
        "deviations) and the score guard added features by significance. The "
        "promise on a null is a false discovery rate, and so a family-wise "
        f"error, of at most {ALPHA}: at most {ALPHA:.0%} of the data sets in "
        "expectation.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - Model",
        "     - Regime",
        "     - Data sets",
        "     - Any kept (default)",
        "     - Any kept (keep_tentative=False)",
        "     - Guard ran",
    ]
    total = {}
    for model in [m for m in MODELS if any(r["model"] == m for r in rows)]:
        for regime in sorted({r["regime"] for r in rows if r["model"] == model}):
            cell = [r for r in rows if r["model"] == model and r["regime"] == regime]
            counts = (
                len(cell),
                sum(r["default_kept"] > 0 for r in cell),
                sum(r["without_kept"] > 0 for r in cell),
                sum(r["guard_ran"] for r in cell),
            )
            old = total.get(model, (0, 0, 0, 0))
            total[model] = tuple(a + b for a, b in zip(old, counts))
            lines += [
                f"   * - {model}",
                f"     - {regime}",
                *[f"     - {c}" for c in counts],
            ]
    for model, counts in total.items():
        lines += [
            f"   * - **{model}**",
            "     - **all**",
            *[f"     - **{c}**" for c in counts],
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return total


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--regimes", nargs="*", default=None)
    parser.add_argument("--models", nargs="*", default=list(MODELS))
    parser.add_argument(
        "--quick", action="store_true", help="seconds, in a temporary folder"
    )
    parser.add_argument(
        "--rerun-default",
        action="store_true",
        help="fit the default again on the data sets already logged (of "
        "--models and --regimes), keeping their keep_tentative=False fits, "
        "which a change of the score guard does not reach",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    rows_path, page_path, trees = ROWS, PAGE, TREES
    if args.quick:
        folder = Path(tempfile.mkdtemp())
        rows_path, page_path, trees = folder / "rows.jsonl", folder / "page.rst", 5
        args.seeds, args.regimes, args.models = 1, ["bin-small-100"], ["forest"]
    logged = {(r["regime"], r["seed"], r["model"]): r for r in read_rows(rows_path)}
    regimes = args.regimes or null_regimes()
    for regime in regimes:
        for model in args.models:
            for seed in range(args.seeds):
                key = (regime, seed, model)
                if key in logged and not args.rerun_default:
                    continue
                if key in logged:
                    row = {**logged[key], **fit(regime, seed, model, trees, ("auto",))}
                else:
                    row = fit(regime, seed, model, trees)
                logged[key] = row
                log_row(rows_path, row)
                print(
                    f"{regime:22s} {model:9s} {seed} kept {row['default_kept']}"
                    f" (without the guard {row['without_kept']})"
                    f"{' guard ran' if row['guard_ran'] else ''}",
                    flush=True,
                )
    for model, counts in page(read_rows(rows_path), page_path).items():
        print(
            f"{model}: {counts[1]} of {counts[0]} kept noise ({counts[2]} "
            f"with keep_tentative=False; the guard ran {counts[3]})"
        )


if __name__ == "__main__":
    main()
