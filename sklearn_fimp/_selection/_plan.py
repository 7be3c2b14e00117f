"""The plan of one ``ImportanceSelector.fit``: everything its steps read,
built once before any fit and never changed.

``ImportanceSelector._plan`` validates the parameters against X and y and
resolves them (the method's registry entry, cv read once, the groups, the
round model, the core's options with the seed of the importances); the
rounds of probes (``_selector_rounds.py``), stability selection's halves
(``_stability.py``) and ``keep_tentative="cv"`` (``_tentative.py``) take
the plan, not the selector, and return what they found; ``fit`` sets the
fitted attributes at the end.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from .._importance._groups import resolve_groups
from .._importance._pipeline import input_sources
from ._measuring._measure import cross_fitted_rows
from ._measuring._probes import (
    MIN_AUTO_PROBES,
    class_top_up,
    probe_classes,
    probe_count,
)
from ._rows import INDEPENDENT


@dataclass(frozen=True)
class Plan:
    """What one fit of the selector measures and decides by."""

    #: X's feature names
    feature_names: np.ndarray
    #: the estimator to fit (a clone, its unset seeds set), or the fitted
    #: one with ``prefit=True``
    estimator: object
    #: the user's estimator as given (None: the default forest), for messages
    given_estimator: object
    #: the method's registry entry (None with ``importance_getter``) and name
    method: object
    method_name: str
    #: ``cv``, an iterable of splits read once into a list
    cv: object
    #: the features' (or groups') labels and column positions
    labels: list
    groups: list
    #: the core's options (read-only), the importances' seed among them
    options: Mapping
    #: how the fit measures and decides, chosen once from ``threshold``
    #: (``_modes.py``: the probe test's rounds, stability selection's
    #: halves, or one measure against a fixed threshold)
    mode: object
    n_rounds: int
    #: how many seeds the rounds' models cycle through (``n_rounds``: each
    #: round its own; ``_round_models.RoundModel.round_fits``)
    round_fits: int
    #: whether the measure step keeps each model it fits for the rounds
    #: after (its seed and rows come again: ``_measure.measure``'s ``fits``)
    keeps_fits: bool
    #: the rows' dependence (``_rows.row_structure``)
    rows: object
    #: ``round_estimator(seed)``: one round's (or half's) model, made by the
    #: round model's registry entry (``_round_models.py``)
    round_estimator: Callable
    #: whether a Pipeline's preprocessing transforms each shadow as the
    #: column it copies (``_pipeline_probes.py``)
    probes_through: bool
    progress: Callable
    #: ``measure(estimator, X, y, options, fit_kwargs=..., models=...,
    #: fit_key=...)``: fit where the method needs it (once per ``fit_key``
    #: and rows) and measure (``_measure.measure``)
    measure: Callable
    #: the most features (or groups) to keep (``max_features_``)
    max_count: int
    #: the probe test's parameters
    probes: str
    #: the probes of every round (n_probes resolved: _selector_rounds.probe_count)
    n_probes: int
    #: ``(classes, extra)``: the probe classes and the shadows added to those
    #: short of their own null (``_probes.class_top_up``); None without probes
    top_up: object
    alpha: float
    correction: object
    prefit: bool
    #: ``keep_tentative="cv"``'s: the user's scoring, parallel jobs, and the
    #: column names a ColumnTransformer may list
    scoring: object
    n_jobs: object
    column_names: object
    #: the tests ``method="auto"`` adds on the rounds' fits
    #: (``_composed.Arm``; empty: the main measure's test alone)
    arms: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))

    @property
    def use_probes(self):
        """Whether the mode adds probes (the probe test decides)."""
        return self.mode.probes


def round_design(
    rounds_model, estimator, method, cv, rows, y, n_rounds, seed, *, probes=True
):
    """``(cv, fits, keeps_fits)`` of the rounds of probes: the splits each
    round measures (without a ``cv``, two fixed halves of the rows drawn
    with ``seed`` when the round model cross-fits, the rows are independent
    and the method scores held-out rows: ``_measure.cross_fitted_rows``;
    else ``cv``, None for a fresh held-out split each round), how many
    seeds the rounds cycle through (``RoundModel.round_fits`` when every
    round measures the same splits; each round its own seed on fresh
    splits), and whether the measure step keeps each fit for the rounds
    after: rounds that fit one estimator on the same splits reuse its
    fits. Without ``probes`` (stability selection, or a threshold):
    ``(cv, n_rounds, False)``."""
    if not probes:
        return cv, n_rounds, False
    if cv is None and rounds_model.cross_fits and rows.kind == INDEPENDENT:
        cv = cross_fitted_rows(method, estimator, y, seed)
    if cv is None:
        return cv, n_rounds, False
    fits = rounds_model.round_fits(estimator, len(y), n_rounds)
    return cv, fits, fits < n_rounds


def tested_columns(rounds_model, method_for, X, y, feature_names, params, probes):
    """``(method, labels, groups, n_probes, top_up)`` of the test: the
    groups of the selector's parameters ``params`` (``get_params``)
    resolved (``groups=``; None: the groups the round model tests with
    ``params["method"]`` when the probes decide,
    ``RoundModel.tested_groups``, else each feature alone), the method's
    registry entry (``method_for()``; ``method_for`` None:
    an ``importance_getter``, no entry), and the probes
    ``params["n_probes"]`` gives for them (``"auto"``: the round model's
    ``probes_per_feature``,
    and on a table of ``MIN_AUTO_PROBES`` groups or more, shadows of their
    own for the classes short of a null of their own); ``top_up`` is
    ``(classes, extra)``: the probe classes the test standardizes by and
    those shadows (``_probes.class_top_up``; ``{}`` for other probes and
    narrower tables), None without probes."""
    given = params["groups"]
    if given is None and probes and method_for is not None:
        given = rounds_model.tested_groups(X, params["method"])
        given = read_apart(given, params["estimator"], X, y)
    method = None if method_for is None else method_for()
    labels, groups = resolve_groups(given, feature_names, X)
    per_feature = rounds_model.probes_per_feature(method)
    n_probes = probe_count(params["n_probes"], len(groups), per_feature)
    if not probes:
        return method, labels, groups, n_probes, None
    top_up = (probe_classes(X, groups), {})
    if (
        params["n_probes"] == "auto"
        and params["probes"] == "shadow"
        and len(groups) >= MIN_AUTO_PROBES
    ):
        top_up = class_top_up(top_up[0], n_probes, [len(g) for g in groups])
        n_probes += sum(top_up[1].values())
    return method, labels, groups, n_probes, top_up


def read_apart(groups, estimator, X, y):
    """``groups`` (column positions, or None) with the columns a Pipeline's
    preprocessing passes to no model input (a ColumnTransformer that drops
    them) taken out, each alone: grouped with a column the model reads, a
    column it never reads would be kept with it, and alone it is measured
    at 0. The preprocessing is fitted once on X, y to read its outputs'
    columns (``_pipeline.input_sources``); when they cannot be read, every
    column counts as read."""
    if groups is None or not isinstance(estimator, Pipeline) or len(estimator) < 2:
        return groups
    try:
        sources = input_sources(clone(estimator[:-1]).fit(X, y), X.shape[1])
    except Exception:  # the Pipeline's own fit reports its errors
        return groups
    if not sources:
        return groups
    read = frozenset().union(*sources)
    apart = [[j] for group in groups for j in group if j not in read]
    kept = [[j for j in group if j in read] for group in groups]
    return sorted([group for group in kept if group] + apart, key=min)
