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
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.utils import Bunch
from sklearn.utils.multiclass import type_of_target

from ..._importance._pipeline import for_columns
from ..._utils._compat import add_note
from ..._utils._frames import drop_columns, take_rows
from ..._utils._scoring import chance_score, get_scorer, score, stored_outputs
from ..._utils._splits import cross_fit_splits, held_out_splits, split_params
from .._rows import INDEPENDENT

#: The share of what all columns score above a constant prediction that the
#: kept columns may lose before ``fit`` warns (``SCORE_LOSS`` below).
SCORE_LOSS = 0.05


def selection_splits(plan, y, seed):
    """The ``(train, test)`` splits the selection's score is measured on:
    two complementary halves of the rows (``_splits.cross_fit_splits``,
    drawn with ``seed``: those the rounds cross-fitted, when they did), or
    the user's ``cv`` where the rows are time-ordered or grouped."""
    if plan.rows.kind != INDEPENDENT and plan.cv is not None:
        return held_out_splits(plan.estimator, plan.cv, y, seed)
    return cross_fit_splits(plan.estimator, y, seed)


#: How many standard deviations of its null spread all columns' mean
#: held-out score must exceed the null's mean by to count as a gain
#: (one-sided p = 0.001 under a normal approximation; :func:`null_threshold`).
CHANCE_Z = 3.09
#: The permutations of the held-out targets that give the null spread, at
#: most, drawn in batches of ``NULL_BATCH``: the draws stop after a batch
#: where all columns' score is twice ``CHANCE_Z`` beyond the null (so clear
#: that the spread's estimate from few draws cannot reverse it).
NULL_PERMUTATIONS = 50
NULL_BATCH = 10


def null_threshold(held_out, k, seed, every):
    """The mean held-out score that all columns (``every``) must exceed for
    their gain over a constant prediction to count (and ``lost`` to be
    measured): what predictions that know nothing of y score, by the same
    predictions against the held-out targets permuted, with their weights,
    within each split (up to ``NULL_PERMUTATIONS`` times a split, drawn
    with ``seed``): the mean over the splits of their permuted scores'
    means, plus ``CHANCE_Z`` times the mean of their standard deviations.
    That is the spread of the splits' mean where their null scores move
    together, as cross-fitted halves' do (the model of each half learns
    the chance pattern of the other's held-out rows: with a logistic
    regression on 100 rows of noise, the mean ROC AUC of the two halves
    spreads by 0.078 against 0.058 for independent halves), and wider
    than it where they do not. A model that predicts nothing scores
    above a constant on a fair share of small tables (CatBoost's Brier
    score on 100 rows of noise), and then the kept columns' shortfall
    reads as a loss of many times the gain. ``held_out``: per split, the
    scorers (the ``k``-th is this score's), what they score (stored
    predictions, or the model), the rows it is scored on, their targets
    and weights."""
    rng = np.random.default_rng(seed)
    draws = [[] for _ in held_out]  # per split, its permuted scores
    while len(draws[0]) < NULL_PERMUTATIONS:
        for _ in range(NULL_BATCH):
            for drawn, (scorers, scored, X_test, y_test, weight) in zip(
                draws, held_out
            ):
                order = rng.permutation(len(y_test))
                y_b, weight_b = take_rows(y_test, order), take_rows(weight, order)
                drawn.append(score(scorers[k], scored, X_test, y_b, weight_b))
        center = float(np.mean([np.mean(drawn) for drawn in draws]))
        spread = float(np.mean([np.std(drawn, ddof=1) for drawn in draws]))
        if every > center + 2 * CHANCE_Z * spread:
            break
    return center + CHANCE_Z * spread


def _scored_outputs(fitted, X_test):
    """What :func:`null_threshold` scores for a fitted model: its stored
    predictions on ``X_test`` (and no columns), or the model and X_test
    where they cannot be stored."""
    stored = stored_outputs(fitted, X_test)
    if stored is None:
        return fitted, X_test
    return stored, np.empty((X_test.shape[0], 0))


def _weighed(y, weight):
    """The targets of the rows of positive ``weight`` (all without one)."""
    y = np.asarray(y)
    return y if weight is None else y[np.asarray(weight) > 0]


def cost_scorings(plan, y):
    """The scorings the selection's cost is measured by, the headline first:
    the user's ``scoring``; else, for a classifier with ``predict_proba`` on
    rows split into independent halves, the area under the ROC curve
    ("roc_auc", one class against the rest for more than two: "roc_auc_ovr")
    and the
    Brier score, where every class has two rows of positive weight (so that
    each half holds it); else the rounds' (a probability's score, or the
    estimator's own). ``lost`` is the larger of the two: the ROC AUC asks
    whether the kept columns order the rows as all of them do, which a
    booster over-confident on half of a few hundred rows still shows where
    a proper score rates all columns below a constant (HMDA's 500 rows with
    LightGBM: log-loss -0.50 against a constant's -0.37); the Brier score
    sees what the ROC AUC cannot near 1 (tissue genes' HistGradientBoosting
    ranks the held-out rows almost perfectly on 3 genes, where 10 move the
    probabilities)."""
    scoring = plan.options.get("scoring")
    if (
        plan.scoring is not None
        or not is_classifier(plan.estimator)
        or not hasattr(plan.estimator, "predict_proba")
        or plan.rows.kind != INDEPENDENT
    ):
        return (scoring,)
    # the classes of the rows that weigh (a class of zero weight is none to
    # the fit), each with two rows or more
    weight = plan.options.get("sample_weight")
    labels, counts = np.unique(_weighed(y, weight), return_counts=True)
    if len(labels) < len(np.unique(y)) or counts.min() < 2:
        return (scoring,)
    kind = type_of_target(y)
    if kind == "binary":
        return "roc_auc", "neg_brier_score"
    if kind == "multiclass":
        return "roc_auc_ovr", "neg_brier_score"
    return (scoring,)


def _share_lost(kept, every, chance, null=None):
    """The share of ``every``'s gain over ``chance`` that ``kept`` loses;
    None without a gain over the constant, or beyond the ``null``
    threshold where it is known."""
    if chance is None or every <= chance or (null is not None and every <= null):
        return None
    return max(0.0, (every - kept) / (every - chance))


def _by_scoring(scores, scorings, chances, known, held_out, named, seed):
    """Per scoring (by name; ``named`` for the estimator's own), the mean of
    its ``scores`` on the kept and on all columns (all columns' from
    ``known`` where given), the constant's ``chances``, ``null``: the
    :func:`null_threshold` of all columns' score, and ``lost``, the share
    of all columns' gain over the constant that the kept ones lose (None
    unless they score above the constant and the null threshold). The
    null threshold is drawn only where a loss would act (some scoring's
    beyond ``SCORE_LOSS``: the guard and the warning read it); else it is
    None and a smaller loss is taken as measured. The guard's candidates
    (``known``) read the first fit's thresholds."""
    by_scoring = {}
    for k, (scoring, chance) in enumerate(zip(scorings, chances)):
        every = (
            float(np.mean(scores["all"][k]))
            if known is None
            else known.scores[scoring or named]["all"]
        )
        kept = float(np.mean(scores["kept"][k]))
        by_scoring[scoring or named] = dict(
            kept=kept, all=every, chance=chance, null=None, lost=None
        )
    acts = any(
        (_share_lost(v["kept"], v["all"], v["chance"]) or 0.0) > SCORE_LOSS
        for v in by_scoring.values()
    )
    for k, (name, v) in enumerate(by_scoring.items()):
        if known is not None:
            v["null"] = known.scores[name]["null"]
        elif acts and _share_lost(v["kept"], v["all"], v["chance"]) is not None:
            v["null"] = null_threshold(held_out, k, seed, v["all"])
        v["lost"] = _share_lost(v["kept"], v["all"], v["chance"], v["null"])
    return by_scoring


def _fitted_half(model, X, y, train, params, name):
    """A clone of ``model`` fitted on the rows ``train``, an error raised
    there noted as the fit on the ``name`` features (kept or all)."""
    try:
        return clone(model).fit(take_rows(X, train), take_rows(y, train), **params)
    except Exception as exc:
        add_note(
            exc,
            f"raised by the fit on the {name} features on half of the rows, "
            "which scores what the selection costs (selection_score_); "
            "the refit would fit the kept ones alike",
        )
        raise


def _half_scores(
    plan, X, y, support, splits, scorings, chances, fit_kwargs, seed, refits_all
):
    """Each split's scores of the round model fitted on its training rows,
    on the ``support`` columns and (``refits_all``) on all of them, by each
    of ``scorings``: ``scores[name][k]``, the k-th scoring's values, one a
    split (a constant's ``chances`` for no kept column); and ``held_out``:
    all columns' predictions, scorers, rows and weights, for the null
    threshold."""
    weight = plan.options.get("sample_weight")
    base = plan.round_estimator(int(seed))
    kept_model = for_columns(base, support, plan.column_names)
    dropped = np.flatnonzero(~support)
    scores = {"kept": [[] for _ in scorings], "all": [[] for _ in scorings]}
    held_out = []
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
                for values, chance in zip(scores[name], chances):
                    values.append(np.nan if chance is None else chance)
                continue
            fitted = _fitted_half(model, X_used, y, train, params, name)
            X_test, y_test = take_rows(X_used, test), take_rows(y, test)
            scorers = [get_scorer(fitted, scoring) for scoring in scorings]
            for values, scorer in zip(scores[name], scorers):
                values.append(score(scorer, fitted, X_test, y_test, rows_weight))
            if name == "all":
                scored = _scored_outputs(fitted, X_test)
                held_out.append((scorers, *scored, y_test, rows_weight))
    return scores, held_out


def selection_score(plan, X, y, support, *, fit_kwargs, seed, known=None):
    """``Bunch(kept, all, chance, lost, n_fits, scoring, n_kept, scores)``: the
    mean held-out score of the round model on the ``support`` columns of X
    and on all of them over :func:`selection_splits`, a constant
    prediction's (None where the scorer cannot score one), ``lost``, the
    share of what all columns gain over the constant that the kept ones
    lose (None without a constant's score, or where all columns do not
    beat it and :func:`null_threshold`), all four by the scoring of
    :func:`cost_scorings` by which the selection loses the most (the first
    where none measures a loss), its name ("r2" or "accuracy" for the
    estimator's own score), the number of kept columns, and ``scores``:
    per scoring, its ``kept``, ``all``, ``chance``, ``null`` (the null
    threshold, None where all columns do not beat the constant) and
    ``lost``. Every
    column kept: nothing fitted, ``lost`` 0; a classifier's rows of
    positive weight all of one class: nothing fitted, ``lost`` None.
    ``known``: an earlier result with the same ``seed`` (the same splits and
    models), whose score on all columns is taken rather than fitted
    again."""
    support = np.asarray(support, dtype=bool)
    scorings = cost_scorings(plan, y)
    if plan.scoring is None and scorings[0] in ("roc_auc", "roc_auc_ovr"):
        # the classes as codes, so that the ranking and the Brier score
        # need no positive label (the models fit the codes alike)
        y = np.unique(np.asarray(y), return_inverse=True)[1].reshape(-1)
    weight = plan.options.get("sample_weight")
    chances = [chance_score(plan.estimator, name, y, weight) for name in scorings]
    # the name of the headline score (None: the estimator's own)
    named = scorings[0]
    if named is None:
        named = "r2" if is_regressor(plan.estimator) else "accuracy"
    # a classifier whose rows of positive weight hold one class has nothing
    # to predict that a constant does not: the cost is not measured (None)
    one_class = (
        is_classifier(plan.estimator) and len(np.unique(_weighed(y, weight))) < 2
    )
    if support.all() or one_class:
        return Bunch(
            kept=None,
            all=None,
            chance=chances[0],
            lost=None if one_class else 0.0,
            n_fits=0,
            scoring=named,
            n_kept=int(support.sum()),
            scores={},
        )
    splits = selection_splits(plan, y, seed)
    refits_all = known is None or known.all is None
    scores, held_out = _half_scores(
        plan, X, y, support, splits, scorings, chances, fit_kwargs, seed, refits_all
    )
    by_scoring = _by_scoring(
        scores,
        scorings,
        chances,
        None if refits_all else known,
        held_out,
        named,
        int(seed),
    )
    # the headline: the scoring by which the selection loses the most
    measured = [k for k, v in by_scoring.items() if v["lost"] is not None]
    if measured:
        named = max(measured, key=lambda k: by_scoring[k]["lost"])
    headline = by_scoring[named]
    n_fits = len(splits) * (int(support.any()) + refits_all)
    return Bunch(
        kept=headline["kept"],
        all=headline["all"],
        chance=headline["chance"],
        lost=headline["lost"],
        n_fits=n_fits,
        scoring=named,
        n_kept=int(support.sum()),
        scores=by_scoring,
    )


def recovers(cost, decisions):
    """Whether ``keep_tentative="auto"`` decides again by cross-validation:
    the selection loses more than ``SCORE_LOSS`` of what all columns score
    above a constant prediction (``cost``: :func:`selection_score`'s, None
    without one), and some features are tentative (``decisions``)."""
    if cost is None or cost.lost is None or cost.lost <= SCORE_LOSS:
        return False
    return decisions is not None and bool(np.any(decisions != "confirmed"))


#: The raw p-value a feature needs to be a candidate of the score guard: it
#: beats at least half of its probes (a noise column is one half the time).
GUARD_LEVEL = 0.5


class ScoreGuard:
    """``choose(test)`` for ``keep_tentative="auto"`` where the
    first decision loses more than ``SCORE_LOSS`` (:func:`recovers`): the
    fewest groups, in ``order`` of significance, whose model recovers all
    but ``SCORE_LOSS`` of what all columns score above a constant, scored
    as :func:`selection_score` scores (the same halves and round model, 2
    half-fits a candidate; all columns' score is ``first``'s).

    The candidates are the groups the first decision kept (``kept``, a
    mask over the groups: whatever their place in ``order``, since a
    corrected p-value need not follow the raw one), then in ``order`` those
    whose raw p-value is at most ``GUARD_LEVEL``; they grow by 1, 2, 4, ...
    groups until one set recovers (every group does: nothing is fitted for
    it), then the last step is halved ``MAX_BISECTIONS`` times. Where no
    set of candidates recovers, all of them are kept (and the selector
    warns). ``cv_results`` (the selector's ``cv_results_``): the candidates
    scored, ``n_features`` in groups, smallest first, and their
    ``mean_test_score`` on the halves; ``support``, the chosen columns,
    and ``cost``, their :func:`selection_score` (``first``'s where none
    was added)."""

    #: halvings of the last step, after the step that recovered
    MAX_BISECTIONS = 3

    def __init__(self, plan, X, y, fit_kwargs, seed, first, kept):
        self.plan, self.X, self.y, self.fit_kwargs = plan, X, y, fit_kwargs
        self.seed, self.first = seed, first
        self.kept = np.asarray(kept, dtype=bool)
        self.cv_results = self.cost = self.support = None
        self.n_fits = 0

    def _support(self, groups):
        support = np.zeros(self.X.shape[1], dtype=bool)
        for g in groups:
            support[self.plan.groups[g]] = True
        return support

    def __call__(self, test):
        order = [
            *(g for g in test.order if self.kept[g]),
            *(
                g
                for g in test.order
                if not self.kept[g] and test.pvalues[g] <= GUARD_LEVEL
            ),
        ]
        n_first, n_groups, tried = int(self.kept.sum()), len(test.order), {}
        self.plan.progress(
            f"adding features by significance until they score within "
            f"{SCORE_LOSS:.0%} of all features on the halves"
        )

        def recovers_at(size):
            if size == n_groups:  # all of them: nothing to fit
                return True
            if size not in tried:
                tried[size] = selection_score(
                    self.plan,
                    self.X,
                    self.y,
                    self._support(order[:size]),
                    fit_kwargs=self.fit_kwargs,
                    seed=self.seed,
                    known=self.first,
                )
                self.n_fits += tried[size].n_fits
            lost = tried[size].lost
            return lost is not None and lost <= SCORE_LOSS

        low, step, high = n_first, 1, len(order)
        while low < len(order):
            if recovers_at(size := min(n_first + step, len(order))):
                high = size
                break
            low, step = size, 2 * step
        else:  # no candidate set recovers: all of them
            low = high
        for _ in range(self.MAX_BISECTIONS):
            middle = (low + high) // 2
            if middle <= low:
                break
            low, high = (low, middle) if recovers_at(middle) else (middle, high)
        passed = np.zeros(n_groups, dtype=bool)
        passed[order[:high]] = True
        self.support = self._support(order[:high])
        self.cost = self.first if high == n_first else tried.get(high)
        sizes = np.array(sorted(tried), dtype=np.intp)
        self.cv_results = {
            "n_features": sizes,
            "mean_test_score": np.array([tried[s].kept for s in sizes]),
        }
        return passed


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
        else "features were added by significance, those that beat at least "
        f"half of their probes (cv_results_): {larger}the promise of alpha"
        if chosen and selector.keep_tentative == "auto"
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
