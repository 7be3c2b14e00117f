"""``keep_tentative="cv"``: the tentative features a cross-validated score
asks for.

The probe test confirms the features whose evidence survives the
correction for testing many features; "tentative" ones beat the probes
only on their own. When the model refitted on the confirmed features
predicts worse than on all of them (weak features, each below the
correction's bar), the tentative features are candidates: nested sets of
them, taken in order of significance, are scored by cross-validation, and
the smallest set within one standard error of the best is kept. Only
tentative features can be added, so the features kept beyond the confirmed
ones each beat the probes at level ``alpha`` on its own; the choice among
them makes no error promise of its own.
"""

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone, is_classifier
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.model_selection import check_cv

from ..._importance._pipeline import for_columns
from ..._utils._frames import take_rows
from ..._utils._scoring import get_scorer, probability_scoring, score
from ..._utils._splits import (
    check_held_out_splits,
    folds_fitting_single_rows,
    split_params,
)
from .._base import select_columns
from .._recursive import choose_size, cv_results


def tentative_sizes(n_confirmed, n_tentative):
    """The candidate numbers of features (or groups), smallest first: the
    confirmed ones, then with the first 1, 2, 4, ... tentative ones by
    significance, and with all of them."""
    steps = [0]
    while steps[-1] < n_tentative:
        steps.append(min(max(1, 2 * steps[-1]), n_tentative))
    return int(n_confirmed) + np.array(steps, dtype=np.intp)


def _subset_score(
    estimator, X, y, columns, train, test, labels, fit_kwargs, score_weight, scorer
):
    """The score on the rows ``test`` of a clone of ``estimator`` fitted on
    the rows ``train`` and the ``columns`` of X; with no column, of the
    model that predicts the training rows' class shares or mean."""
    n_rows = X.shape[0]
    if columns.any():
        model = clone(for_columns(estimator, columns, labels))
        X = select_columns(X, columns)
    else:
        model = DummyClassifier() if is_classifier(estimator) else DummyRegressor()
        X = np.zeros((n_rows, 1))
        fit_kwargs = {k: v for k, v in fit_kwargs.items() if k == "sample_weight"}
    model.fit(take_rows(X, train), y[train], **split_params(fit_kwargs, train, n_rows))
    weight = None if score_weight is None else score_weight[test]
    return score(scorer, model, take_rows(X, test), y[test], weight)


def choose_tentative(
    estimator,
    X,
    y,
    *,
    decisions,
    order,
    groups,
    labels,
    splits,
    fit_kwargs,
    score_weight,
    scorer,
    n_jobs=None,
):
    """The features (or groups) to keep: the confirmed ones and the first
    tentative ones by significance (``order``), as many as the smallest
    candidate of :func:`tentative_sizes` whose mean score over ``splits``
    is at least the best mean minus one standard error of the best's
    scores (``_recursive.choose_size``'s "one_se").

    Returns
    -------
    passed : ndarray of bool of shape (n_groups,)
    cv_results : dict of ndarrays
        ``n_features`` (the candidate sizes, in features or groups),
        ``mean_test_score``, ``std_test_score`` and ``split{k}_test_score``;
        the scores are NaN when no feature was tentative (nothing is
        fitted).
    """
    decisions = np.asarray(decisions)
    confirmed = decisions == "confirmed"
    tentative = [g for g in order if decisions[g] == "tentative"]
    sizes = tentative_sizes(confirmed.sum(), len(tentative))
    candidates = []
    for size in sizes:
        chosen = confirmed.copy()
        chosen[tentative[: size - confirmed.sum()]] = True
        candidates.append(chosen)
    if len(sizes) == 1:
        scores = np.full((1, len(splits)), np.nan)
    else:
        n_features = X.shape[1]
        masks = []
        for chosen in candidates:
            columns = np.zeros(n_features, dtype=bool)
            for g in np.flatnonzero(chosen):
                columns[groups[g]] = True
            masks.append(columns)
        values = Parallel(n_jobs=n_jobs)(
            delayed(_subset_score)(
                estimator,
                X,
                y,
                columns,
                train,
                test,
                labels,
                fit_kwargs,
                score_weight,
                scorer,
            )
            for columns in masks
            for train, test in splits
        )
        scores = np.asarray(values, dtype=np.float64).reshape(len(sizes), len(splits))
    chosen = 0 if len(sizes) == 1 else choose_size(sizes, scores, "one_se")
    return candidates[chosen], cv_results(sizes, scores)


class TentativeChoice:
    """``choose(test)`` (a ``_decisions.ProbeDecision``: its ``decisions``
    and ``order``) for ``keep_tentative="cv"``
    (:func:`choose_tentative`), which keeps what it scored as
    ``cv_results`` (the selector's ``cv_results_``)."""

    def __init__(self, plan, X, y, fit_kwargs, splits, scorer):
        self.plan, self.X, self.y, self.fit_kwargs = plan, X, y, fit_kwargs
        self.splits, self.scorer = splits, scorer
        self.cv_results = None

    def __call__(self, test):
        plan, decisions = self.plan, test.decisions
        plan.progress(
            f"choosing among {int(np.sum(decisions == 'tentative'))} tentative "
            f"features by {len(self.splits)}-fold cross-validation"
        )
        passed, self.cv_results = choose_tentative(
            plan.estimator,
            self.X,
            self.y,
            decisions=decisions,
            order=test.order,
            groups=plan.groups,
            labels=plan.column_names,
            splits=self.splits,
            fit_kwargs=self.fit_kwargs,
            score_weight=plan.options["sample_weight"],
            scorer=self.scorer,
            n_jobs=plan.n_jobs,
        )
        return passed


#: The folds of ``keep_tentative="cv"`` when ``cv`` is None.
TENTATIVE_FOLDS = 5


def tentative_choice(plan, X, y, fit_kwargs):
    """The :class:`TentativeChoice` of ``plan`` (a ``_plan.Plan``) for
    ``keep_tentative="cv"``: the estimator as the refit fits it (all its
    trees: with the rounds' 30 trees, a forest's log-loss favoured larger
    sets, 131 columns and 3 planted ones on the power benchmark's grants
    table against 22 and none with all 100), the splits of ``cv`` (5-fold,
    stratified for classifiers, when None), the scorer of ``scoring``
    (log-loss for a classifier with ``predict_proba`` when None). A class of
    one row is fitted on in every one of the default folds and scored in
    none, as the rounds' held-out rows leave it (a ``cv`` given is split as
    given)."""
    if plan.cv is None:
        splits = folds_fitting_single_rows(plan.estimator, TENTATIVE_FOLDS, y)
    else:
        splits = list(
            check_cv(plan.cv, y, classifier=is_classifier(plan.estimator)).split(X, y)
        )
    check_held_out_splits(plan.estimator, y, splits, plan.options["sample_weight"])
    scorer = get_scorer(
        plan.estimator, probability_scoring(plan.estimator, plan.scoring)
    )
    return TentativeChoice(plan, X, y, fit_kwargs, splits, scorer)
