"""The score a selection costs, measured on every fit.

A test that keeps no noise can still keep too little: redundant columns
that stand in for each other, or a signal spread thinly over many columns.
What a user checks first is whether the model on the kept columns scores
as well as on all of them. ``selection_score`` measures it where the
rounds measured: the round model (sized as the rounds size it) fitted on
each of two complementary halves of the rows, once on the kept columns and
once on all of them, each scored on the other half by the rounds' scorer.
It costs four fits on half of the rows, about two plain fits (none when
every column is kept). With time-ordered or grouped rows the halves are the
splits of the user's ``cv``, which keep the rows' dependence.
"""

import warnings

import numpy as np
from sklearn.base import clone, is_regressor
from sklearn.utils import Bunch

from .._importance._pipeline import for_columns
from .._utils._compat import add_note
from .._utils._frames import drop_columns, take_rows
from .._utils._scoring import chance_score, get_scorer, score
from .._utils._splits import cross_fit_splits, held_out_splits, split_params
from ._rows import INDEPENDENT

#: The share of what all columns score above a constant prediction that the
#: kept columns may lose before ``fit`` warns (``SCORE_LOSS`` below).
SCORE_LOSS = 0.1


def selection_splits(plan, y, seed):
    """The ``(train, test)`` splits the selection's score is measured on:
    two complementary halves of the rows (``_splits.cross_fit_splits``,
    drawn with ``seed``: those the rounds cross-fitted, when they did), or
    the user's ``cv`` where the rows are time-ordered or grouped."""
    if plan.rows.kind != INDEPENDENT and plan.cv is not None:
        return held_out_splits(plan.estimator, plan.cv, y, seed)
    return cross_fit_splits(plan.estimator, y, seed)


def selection_score(plan, X, y, support, *, fit_kwargs, seed, known=None):
    """``Bunch(kept, all, chance, lost, n_fits, scoring)``: the mean
    held-out score of the round model on the ``support`` columns of X and on
    all of them over :func:`selection_splits`, a constant prediction's (None
    where the scorer cannot score one), ``lost``, the share of what all
    columns gain over the constant that the kept ones lose (None without a
    constant's score or a gain), and the name of the rounds' ``scoring``
    it was scored by ("r2" or "accuracy" for the estimator's own score).
    Every column kept: nothing fitted, ``lost`` 0. ``known``: an earlier
    result with the same ``seed`` (the same splits and models), whose score
    on all columns is taken rather than fitted again."""
    support = np.asarray(support, dtype=bool)
    scoring = plan.options.get("scoring")
    weight = plan.options.get("sample_weight")
    chance = chance_score(plan.estimator, scoring, y, weight)
    # the name of the score (None: the estimator's own, R^2 or accuracy)
    named = scoring
    if scoring is None:
        named = "r2" if is_regressor(plan.estimator) else "accuracy"
    if support.all():
        return Bunch(
            kept=None, all=None, chance=chance, lost=0.0, n_fits=0, scoring=named
        )
    splits = selection_splits(plan, y, seed)
    base = plan.round_estimator(int(seed))
    kept_model = for_columns(base, support, plan.column_names)
    dropped = np.flatnonzero(~support)
    scores = {"kept": [], "all": []}
    refits_all = known is None or known.all is None
    for train, test in splits:
        params = split_params(fit_kwargs, train, len(y))
        rows_weight = take_rows(weight, test)
        for name, model, X_used in (
            ("all", base, X),
            ("kept", kept_model, drop_columns(X, dropped)),
        ):
            if name == "all" and not refits_all:
                continue
            if name == "kept" and not support.any():
                scores[name].append(np.nan if chance is None else chance)
                continue
            try:
                fitted = clone(model).fit(
                    take_rows(X_used, train), take_rows(y, train), **params
                )
            except Exception as exc:
                add_note(
                    exc,
                    f"raised by the fit on the {name} features on half of the rows, "
                    "which scores what the selection costs (selection_score_); "
                    "the refit would fit the kept ones alike",
                )
                raise
            scorer = get_scorer(fitted, scoring)
            value = score(
                scorer, fitted, take_rows(X_used, test), take_rows(y, test), rows_weight
            )
            scores[name].append(value)
    kept = float(np.mean(scores["kept"]))
    every = float(np.mean(scores["all"])) if refits_all else known.all
    lost = None
    if chance is not None and every > chance:
        lost = max(0.0, (every - kept) / (every - chance))
    n_fits = len(splits) * (int(support.any()) + refits_all)
    return Bunch(
        kept=kept, all=every, chance=chance, lost=lost, n_fits=n_fits, scoring=named
    )


def recovers(cost, decisions):
    """Whether ``keep_tentative="auto"`` decides again by cross-validation:
    the selection loses more than ``SCORE_LOSS`` of what all columns score
    above a constant prediction (``cost``: :func:`selection_score`'s, None
    without one), and some features are tentative (``decisions``)."""
    if cost is None or cost.lost is None or cost.lost <= SCORE_LOSS:
        return False
    return decisions is not None and bool(np.any(decisions == "tentative"))


def warn_if_selection_costs(selector, stacklevel=4):
    """Warn when the fitted ``selector``'s kept columns lose more than
    ``SCORE_LOSS`` of what all columns score above a constant prediction
    (``selection_score_``), naming what keeps more: ``max_features`` when it
    capped the selection, ``keep_tentative="cv"`` when features were
    tentative (``decisions_``: the probe test's, or None) and a
    cross-validated score has not chosen among them (``cv_results_``), else
    ``min_features``."""
    cost, decisions = selector.selection_score_, selector.decisions_
    if cost is None:
        return
    n_kept = int(selector.support_.sum())
    capped = selector.max_features is not None and n_kept >= selector.max_features_
    chosen = hasattr(selector, "cv_results_")
    if cost.lost is None or cost.lost <= SCORE_LOSS:
        return
    tentative = 0 if decisions is None else int(np.sum(decisions == "tentative"))
    larger = "a larger min_features keeps the next ones by significance, outside "
    fix = (
        f"max_features kept {n_kept}: a larger one keeps more"
        if capped
        else f"a cross-validated score chose among the {tentative} tentative "
        f"features (cv_results_): {larger}the promise of alpha"
        if chosen
        else f"{tentative} features are tentative (they beat the probes before the "
        "correction): keep_tentative='cv' keeps those a cross-validated score "
        "asks for, outside the promise of alpha"
        if tentative
        else f"no feature is tentative: {larger}the promise of alpha"
    )
    warnings.warn(
        f"the {n_kept} kept features score {cost.kept:.4g} on held-out halves "
        f"of the rows, all features {cost.all:.4g} and a constant prediction "
        f"{cost.chance:.4g}: the selection loses {cost.lost:.0%} of what the "
        f"model gains over the constant (selection_score_). {fix}.",
        UserWarning,
        stacklevel=stacklevel,
    )


def selection_cost(plan, X, y, support, *, fit_kwargs, seed, known=None):
    """:func:`selection_score` of the fit's ``support``, said in the
    progress lines."""
    plan.progress("scoring the kept and all features on halves of the rows")
    return selection_score(
        plan, X, y, support, fit_kwargs=fit_kwargs, seed=seed, known=known
    )
