"""Probe columns: shuffled copies of the features, or random noise.

Probes are appended to X (numpy, pandas or polars, kept in its container)
so that the model and the importance function see them as features.
"""

import numbers

import numpy as np

from ..._utils._compat import Interval, StrOptions
from ..._utils._frames import is_pandas, is_polars
from ..._utils._validation import text_columns_in_error
from .._deciding._probe_test import MIN_CLASS_NULL

#: ``n_probes`` of both front ends (ImportanceSelector and
#: distributed_select_features): "auto", or two probes at least, the fewest
#: whose spread the test can estimate.
N_PROBES = [StrOptions({"auto"}), Interval(numbers.Integral, 2, None, closed="left")]
#: n_probes="auto" adds one probe per feature (or group), and at least this
#: many, so that the spread of the probes' importances is estimated well
#: enough (each times the round model's ``probes_per_feature``) ...
MIN_AUTO_PROBES = 50
#: ... or at least this many where every round draws fresh probes
#: (distributed_select_features): the round test then has n_rounds times as
#: many null values as the probes of one round.
MIN_AUTO_FRESH_PROBES = 20


def probe_count(n_probes, n_groups, per_feature=1, *, fresh=False):
    """The probes of ``n_probes`` ("auto" or an int) for ``n_groups``:
    "auto", ``per_feature`` per group and ``per_feature`` times
    ``MIN_AUTO_PROBES`` at least (``MIN_AUTO_FRESH_PROBES`` where each round
    draws ``fresh`` probes)."""
    if n_probes != "auto":
        return n_probes
    least = MIN_AUTO_FRESH_PROBES if fresh else MIN_AUTO_PROBES
    return per_feature * max(n_groups, least)


def draw_mirrors(n_groups, n_probes, rng, top_up=None):
    """The group each of ``n_probes`` probes mirrors: layers of a random
    order of the ``n_groups`` groups, every group once before any twice
    (probe ``k`` lies in layer ``k // n_groups``). With ``top_up``
    (``(classes, extra)`` of :func:`class_top_up`), the last ``sum(extra)``
    probes are the extra ones of each class short of its own null, in the
    order of the classes, each class's groups drawn the same way."""
    extra = {} if top_up is None else top_up[1]
    base = n_probes - sum(extra.values())
    layers = [rng.permutation(n_groups) for _ in range(-(-base // n_groups))]
    mirrors = [np.concatenate(layers)[:base]]
    for code in sorted(extra):
        members = np.flatnonzero(top_up[0] == code)
        count = extra[code]
        layers = [rng.permutation(members) for _ in range(-(-count // len(members)))]
        mirrors.append(np.concatenate(layers)[:count])
    return np.concatenate(mirrors)


#: The shadows ``n_probes="auto"`` gives each class short of a null of its
#: own, at most (see class_top_up).
TOP_UP_PROBES = 500


def class_top_up(classes, n_probes, widths):
    """``(classes, extra)``: the classes (one per group) that standardize the
    probe test's scores, and the shadows added to each class short of a
    null of its own (``{class: count}``; empty: none added, and ``classes``
    as given). ``n_probes``: the probes before; ``widths``: each group's
    columns.

    The mean test (``_probe_test.mean_test``) scores a feature against its
    class's probes where the class has ``MIN_CLASS_NULL`` of them, and
    against all probes pooled otherwise. Where some classes have their own
    null and others do not, the pool is the large classes', whose tail need
    not be the small ones'. On ``bench_calibration.py``'s
    bin-classes-wide-200 (pure noise: 300 normal and 250 sparse binary
    columns, each kind a class with its own null; six blocks of four binary
    near-copies and 12 ten-level columns, whose classes of 24 and 12 probes
    merge into one), the ten-level columns' p-values were at most 0.05 in
    12.1% of 480 and the blocks' at most 0.01 in 2.2% of 960 (the normal
    columns': 4.8% and 0.7%).

    So there each class short of ``MIN_CLASS_NULL`` probes (``n_probes //
    n_groups`` per group) gets shadows of its own groups, every group once
    before any twice, up to one common count: ``TOP_UP_PROBES``, fine
    enough for the p-values a correction over a thousand features needs,
    or as many as fit in as many added columns as the groups hold (the
    probes at most double), and ``MIN_CLASS_NULL`` at least. Their features
    are then tested against shadows of their own kind alone: on
    bin-classes-wide-200 the ten-level p-values were at most 0.05 in 4.4%
    and the blocks' at most 0.01 in 0.7% (``docs/bench_calibration.rst``).
    Each class is topped up as it is, not merged with its neighbours
    first: merged, two small classes of different kinds shared one null
    (on ``bench_calibration.py``'s bin-kinds-wide-60, 8 normal and 8
    ten-level columns among 56 binary ones, the normal noise columns'
    p-values were at most 0.05 in 10.7% of 140, the ten-level ones' in
    0.6% of 160; filled apart, 4.1% and 3.4% on its null regime's 40 data
    sets). Where no class has its own null, all share the pooled
    one (the calibration's narrower regimes measure it), and nothing is
    added."""
    classes = np.asarray(classes)
    widths = np.asarray(widths, dtype=np.float64)
    per_group = n_probes // len(classes)
    if per_group == 0:
        return classes, {}
    codes, sizes = np.unique(classes, return_counts=True)
    counts = per_group * sizes
    short = counts < MIN_CLASS_NULL
    if short.all() or not short.any():
        return classes, {}
    width = np.array([widths[classes == code].mean() for code in codes[short]])

    def columns(target):
        return float(np.sum((target - counts[short]) * width))

    low, high = MIN_CLASS_NULL, max(TOP_UP_PROBES, MIN_CLASS_NULL)
    while low < high:  # the largest count within the budget
        middle = (low + high + 1) // 2
        if columns(middle) <= widths.sum():
            low = middle
        else:
            high = middle - 1
    extra = {code: int(low - count) for code, count in zip(codes[short], counts[short])}
    return classes, extra


#: Upper ends of the bins of distinct values that make the classes of
#: :func:`probe_classes`: binary, 3-4, 5-9, 10-19, 20-49, 50-99, 100 or more.
_DISTINCT_BINS = (2, 4, 9, 19, 49, 99)


def _distinct_values(X, column):
    """Distinct non-missing values of one column of X (numpy, pandas or
    polars)."""
    if is_pandas(X):
        return int(X.iloc[:, column].nunique(dropna=True))
    if is_polars(X):
        series = X.get_column(X.columns[column]).drop_nulls()
        return int(series.n_unique())
    values = X[:, column]
    if values.dtype.kind == "f":
        values = values[~np.isnan(values)]
    try:
        return len(np.unique(values))
    except TypeError:  # objects that do not sort: the model's fit says why
        return len(values)


def probe_classes(X, groups):
    """The class of each group whose shadows standardize its importance:
    groups of the same width whose columns have about as many distinct
    values (the most of any of its columns, binned by ``_DISTINCT_BINS``)
    share their shadows' spread. A shadow copies its column's distribution
    and number of distinct values, which set how much importance chance
    alone gives it (a continuous column's spreads wider than a three-level
    one's), so a feature is compared with the shadows of features like it;
    with one shadow per feature, its own would be too few."""
    classes = np.empty(len(groups), dtype=np.intp)
    for g, columns in enumerate(groups):
        distinct = max(_distinct_values(X, c) for c in columns)
        level = int(np.searchsorted(_DISTINCT_BINS, distinct))
        classes[g] = level * 1000 + min(len(columns), 999)
    return classes


def probe_names(feature_names, labels, mirrored, kind):
    """Probe names that no feature of X uses: ``probe_<i>``, followed for a
    shadow by the label of the feature (or group) it copies
    (``probe_3_age``), so that a reader sees what each probe stands for."""
    copied = [labels[g] if kind == "shadow" else None for g in mirrored]
    taken = set(map(str, feature_names))
    prefix = "probe_"
    while any(name.startswith(prefix) for name in taken):
        prefix = "_" + prefix
    return [
        f"{prefix}{i}" if label is None else f"{prefix}{i}_{label}"
        for i, label in enumerate(copied)
    ]


def _probe_columns(X, columns, kind, rng, rows=None):
    """Probe values for ``columns`` of X: one array (numpy) or Series each.

    Shadows are the columns shuffled by one row permutation (the columns of
    a group stay together), so each probe keeps its feature's distribution,
    dtype and number of distinct values; with dependent ``rows`` (a
    ``_rows.RowStructure``), the rows it draws keep the dependence along
    time or within groups.
    """
    n = X.shape[0]
    if kind == "shadow":
        if rows is None:
            permutation = rng.permutation(n)
        else:
            permutation = rows.shadow_rows(X, columns, rng)
        if is_pandas(X):
            return [X.iloc[permutation, c].to_numpy() for c in columns], [
                X.dtypes.iloc[c] for c in columns
            ]
        if is_polars(X):
            import polars as pl

            order = pl.Series(permutation)
            return [X.get_column(X.columns[c]).gather(order) for c in columns], None
        return [X[permutation, c] for c in columns], None
    draw = rng.uniform if kind == "uniform" else rng.standard_normal
    return [draw(size=n) for _ in columns], None


def add_probes(
    X,
    groups,
    feature_names,
    kind,
    n_probes,
    rng,
    *,
    labels,
    mirrors=False,
    rows=None,
    top_up=None,
):
    """X with probe columns appended (X is not modified).

    Each probe mirrors one group of real features (a single feature when
    there are no groups): ``n_probes`` groups are drawn, every group once
    before any twice. Returns the new table, the probe groups (column
    positions in it) and the probe labels, and with ``mirrors=True`` the
    index of the group each probe mirrors. ``labels`` are the groups' labels
    (as ``resolve_groups`` gives them): a shadow's label names the group it
    copies. ``rows`` (a ``_rows.RowStructure``, None for independent rows)
    says how shadows draw their rows; ``top_up`` (:func:`class_top_up`)
    which classes get extra probes.
    """
    mirrored = draw_mirrors(len(groups), n_probes, rng, top_up)
    probe_labels = probe_names(feature_names, labels, mirrored, kind)
    n_features = X.shape[1]
    values, dtypes, names, probe_groups = [], [], [], []
    for label, g in zip(probe_labels, mirrored):
        columns = groups[g]
        column_values, column_dtypes = _probe_columns(X, columns, kind, rng, rows)
        values.extend(column_values)
        dtypes.extend(column_dtypes or [None] * len(columns))
        if len(columns) == 1:
            names.append(label)
        else:
            names.extend(f"{label}_{i}" for i in range(len(columns)))
        start = n_features + len(names) - len(columns)
        probe_groups.append(np.arange(start, start + len(columns)))
    table = _append_columns(X, values, dtypes, names)
    if mirrors:
        return table, probe_groups, probe_labels, mirrored
    return table, probe_groups, probe_labels


def _append_columns(X, values, dtypes, names):
    if is_pandas(X):
        import pandas as pd

        columns = {}
        for name, value, dtype in zip(names, values, dtypes):
            columns[name] = pd.Series(value, index=X.index, name=name)
            if dtype is not None:
                columns[name] = columns[name].astype(dtype)
        if not all(isinstance(c, str) for c in X.columns):
            X = X.set_axis([str(c) for c in X.columns], axis=1)
        return pd.concat([X, pd.DataFrame(columns, index=X.index)], axis=1)
    if is_polars(X):
        import polars as pl

        return X.with_columns(
            [
                value.alias(name)
                if isinstance(value, pl.Series)
                else pl.Series(name, value)
                for name, value in zip(names, values)
            ]
        )
    probes = np.column_stack(values)
    dtype = np.result_type(X.dtype, probes.dtype)
    return np.hstack([X.astype(dtype, copy=False), probes.astype(dtype, copy=False)])


def explain_failed_shadows(exc, X, fit_without_probes, estimator):
    """Raise a clearer error than ``exc`` when the estimator fits X
    (``fit_without_probes()`` succeeds) but not X with shadow copies of its
    text columns: a step that selects the text columns by name lets their
    copies through unencoded. Return (leaving ``exc`` to be raised) in any
    other case."""
    found = text_columns_in_error(exc, X)
    if not found:
        return
    try:
        fit_without_probes()
    except Exception:  # the estimator fails without probes too: not ours
        return
    name = found[0][0]
    model = "the default estimator"
    if estimator is not None:
        model = f"estimator={type(estimator).__name__}(...)"
    raise ValueError(
        f"{model} fits X but not X with probes: probes='shadow' adds "
        f"copies of X's columns under new names ({name!r} is copied as "
        f"'probe_<i>_{name}'), and the copies of the text column(s) "
        f"{', '.join(repr(n) for n, _ in found)} reach the model unencoded "
        f"({str(exc).strip().splitlines()[0]}). A step that selects "
        "columns by name (a ColumnTransformer listing them) does not "
        "know the copies. Select the columns by dtype instead, e.g. "
        "make_column_selector(dtype_exclude='number') for the encoder, so "
        "that each copy is encoded as its column is; or use "
        "probes='normal' (probes that copy no column)."
    ) from exc


def check_probes_reach_model(model, n_features, n_columns):
    """Raise when a fitted Pipeline ``model`` (fitted on X's ``n_features``
    columns followed by probes, ``n_columns`` in all) passes no probe column
    to its last step: every probe would score exactly 0 and every feature
    the model uses would "beat" them, a selection that means nothing. Which
    columns reach the last step comes from the fitted steps
    (``_importance._pipeline.input_sources``)."""
    from sklearn.pipeline import Pipeline

    from ..._importance._pipeline import input_sources

    if not isinstance(model, Pipeline) or len(model.steps) < 2:
        return
    sources = input_sources(model[:-1], n_columns)
    if sources is None or any(
        max(inner, default=-1) >= n_features for inner in sources
    ):
        return
    raise ValueError(
        f"The Pipeline's steps before its model ({', '.join(model.named_steps)[:80]}) "
        "pass none of the probe columns on: a step selects X's columns by "
        "name or position and drops the others (a ColumnTransformer with "
        "remainder='drop'), so every probe would score 0 and every feature "
        "the model uses would beat them, whether it is noise or not. Select "
        "the columns by dtype (make_column_selector) or pass the others "
        "through (remainder='passthrough'), so that each probe is transformed "
        "like the column it copies; or put the selector after the "
        "preprocessing, on the columns the model sees."
    )
