"""Drop-column importance: retrain without each feature or group."""

import numbers

from joblib import Parallel, delayed
from sklearn.base import clone

from .._utils._compat import HasMethods, StrOptions, add_note, validate_params
from .._utils._frames import hold_constant, take_rows
from .._utils._models import supports_oob
from .._utils._progress import Progress
from .._utils._random import draw_seed, with_shared_seed
from .._utils._result import importance_result
from .._utils._scoring import (
    MULTIMETRIC_SCORING_CONSTRAINT,
    get_scorer,
    per_metric,
    score,
    stack_scores,
)
from .._utils._splits import held_out_splits, split_params
from .._utils._validation import check_inputs, explain_input_errors
from ._bagging import (
    bagged_members,
    ensemble_input,
    oob_sums,
    score_oob_sums,
)
from ._groups import UNGROUPED_OPTIONS, resolve_groups


def _splits(estimator, cv, y, seed):
    """Train/test index pairs, or None for out-of-bag scoring."""
    if cv is None and supports_oob(estimator):
        return None
    return held_out_splits(estimator, cv, y, seed)


def _fit_and_score(estimator, X, y, sample_weight, fit_params, dropped, split, scorer):
    """Fit a clone with the ``dropped`` columns held constant and score it.

    The dropped columns keep their positions and hold one value: the model
    can learn nothing from them, and every other column stays where it was.
    Removing them instead would shift the positions of the columns after
    them, and a model that samples columns by position (a forest's
    ``max_features``) would then draw other columns with the same seed: the
    score lost would depend on where the column sits, not on what it
    carries (the columns after the real ones, probes among them, lost
    systematically less)."""
    estimator = clone(estimator)
    X_kept = X if dropped is None else hold_constant(X, dropped)
    try:
        return _fit_and_score_kept(
            estimator, X_kept, y, sample_weight, fit_params, split, scorer
        )
    except Exception as exc:
        what = (
            "all columns"
            if dropped is None
            else f"columns {list(map(int, dropped))} dropped"
        )
        add_note(exc, f"drop_column_importance: raised by the fit with {what}.")
        raise


def _fit_and_score_kept(estimator, X_kept, y, sample_weight, fit_params, split, scorer):
    """Fit ``estimator`` on ``X_kept`` with ``fit_params`` and score it (out
    of bag, or on the test rows of ``split``) with ``sample_weight``."""
    if split is None:
        estimator.fit(X_kept, y, **fit_params)
        members = bagged_members(estimator, X_kept.shape[0])
        total, count = oob_sums(estimator, members, ensemble_input(estimator, X_kept))
        return score_oob_sums(scorer, estimator, total, count, y, sample_weight)
    train, test = split
    estimator.fit(
        take_rows(X_kept, train),
        y[train],
        **split_params(fit_params, train, X_kept.shape[0]),
    )
    return score(
        scorer,
        estimator,
        take_rows(X_kept, test),
        y[test],
        take_rows(sample_weight, test),
    )


@explain_input_errors
@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like"],
        "y": ["array-like"],
        "scoring": MULTIMETRIC_SCORING_CONSTRAINT,
        "cv": ["cv_object"],
        "groups": [list, tuple, dict, StrOptions({"auto"}), None],
        "ungrouped": [StrOptions(set(UNGROUPED_OPTIONS))],
        "sample_weight": ["array-like", None],
        "n_jobs": [numbers.Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def drop_column_importance(
    estimator,
    X,
    y,
    *,
    scoring=None,
    cv=None,
    groups=None,
    ungrouped="separate",
    sample_weight=None,
    n_jobs=None,
    verbose=0,
    random_state=None,
):
    """Drop-column importance: the score lost by retraining without a feature.

    For each feature (or group), a clone of the estimator is trained with
    the feature's information removed, and its importance is the baseline
    model's score minus the clone's. The feature is removed by holding it
    constant (every row gets the values of one row, the first with none
    missing), not by deleting the column: every other column keeps its
    position, so a model that draws columns by position with a seed (a
    forest's ``max_features``) draws the same ones, and the importance does
    not depend on the column's position. A constant column carries nothing
    a model can split or weigh on. The baseline and every clone share one
    random state (every ``random_state`` parameter left unset is set to one
    seed drawn from ``random_state``), so the only difference between them
    is the removed information. It is the most direct answer to "does the
    model need this feature?", and the most expensive (one fit per feature
    and split). A feature whose information another feature also carries
    (a duplicate) gets about zero, because the model does as well without
    it.

    How the score is measured:

    - ``cv=None`` and a RandomForest*, ExtraTrees* or Bagging* model with
      ``bootstrap=True``: each model's out-of-bag score on all the rows.
    - ``cv=None`` otherwise: one held-out split of 20% (stratified for
      classifiers).
    - ``cv`` given (int, splitter or iterable, as in
      :func:`~sklearn.model_selection.cross_validate`): every split, each
      giving one column of ``importances``.

    Parameters
    ----------
    estimator : estimator
        An estimator or Pipeline (fitted or not; it is cloned).
    X : array-like or DataFrame of shape (n_samples, n_features)
        All rows; splits are taken from them.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
    scoring : str, callable, list, tuple, dict or None, default=None
        Scorer name or callable; None uses the estimator's ``score``.
        Several metrics (a list or tuple of scorer names, a dict of
        scorers, or a callable returning a dict), as in
        :func:`permutation_importance`: each model is fitted once and
        scored by every metric, and the result is a dict of results, one
        per metric.
    cv : int, cross-validation generator, iterable or None, default=None
        See above.
    groups : None, "auto", list or dict, default=None
        As in :func:`permutation_importance`; a group is dropped as a whole.
    ungrouped : {"separate", "together", "drop"}, default="separate"
        As in :func:`permutation_importance`.
    sample_weight : array-like of shape (n_samples,), default=None
        Passed to ``fit`` (as ``sample_weight``) and to the scorer.
    n_jobs : int or None, default=None
        Parallel fits (joblib semantics), over features and splits;
        ``joblib.parallel_config(backend="dask")`` runs them on a Dask
        cluster, with the same results.
    verbose : int, default=0
        Progress messages on stderr: the number of fits, and joblib's
        progress of the parallel fits.
    random_state : int, RandomState instance or None, default=None
        Seed shared by every fit, and of the held-out split.

    Returns
    -------
    result : Bunch, or dict of Bunch
        With several metrics in ``scoring``, a dict ``{metric name:
        result}``, each result as follows.

        importances : ndarray of shape (n_groups, n_splits)
            Baseline score minus the score without the group, per split.
        importances_mean, importances_std : ndarray of shape (n_groups,)
        feature_names : ndarray of shape (n_groups,)
        groups : list of ndarray
        baseline_score : float
            Mean baseline score over splits.
        baseline_scores : ndarray of shape (n_splits,)
        evaluation : {"oob", "holdout", "cv"}
        method, scoring, random_state

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn_fimp import drop_column_importance
    >>> X, y = make_regression(n_samples=200, n_features=3, n_informative=1,
    ...                        random_state=0)
    >>> result = drop_column_importance(Ridge(), X, y, cv=3, random_state=0)
    >>> int(result.importances_mean.argmax())
    1
    """
    X, feature_names, y, sample_weight = check_inputs(
        estimator, X, y, sample_weight, fitted=False
    )
    labels, groups = resolve_groups(groups, feature_names, X, ungrouped=ungrouped)
    for label, columns in zip(labels, groups):
        if len(columns) == X.shape[1]:
            raise ValueError(
                f"groups: dropping group {label!r} would leave no feature to "
                "train on; remove it from groups or use ungrouped='separate'."
            )
    return _drop_column_importance(
        estimator,
        X,
        y,
        labels=labels,
        groups=groups,
        seed=draw_seed(random_state),
        sample_weight=sample_weight,
        scoring=scoring,
        cv=cv,
        n_jobs=n_jobs,
        verbose=verbose,
    )


def _drop_column_importance(
    estimator,
    X,
    y,
    *,
    labels,
    groups,
    seed,
    sample_weight=None,
    fit_params=None,
    scoring=None,
    cv=None,
    n_jobs=None,
    verbose=0,
):
    """:func:`drop_column_importance` on validated input: X an array or
    frame, y an array, ``groups`` the column positions of each of
    ``labels`` (none of them all of X's columns) and ``seed`` an int.

    ``fit_params`` go to every fit (per-row values restricted to the fitted
    rows); None: ``sample_weight`` alone, which also weights the scores (a
    selector routes the fit's and the scorer's weights apart)."""
    if fit_params is None:
        fit_params = {} if sample_weight is None else {"sample_weight": sample_weight}
    estimator = with_shared_seed(estimator, seed)
    scorer = get_scorer(estimator, scoring)
    splits = _splits(estimator, cv, y, seed)
    evaluation = "oob" if splits is None else ("holdout" if cv is None else "cv")
    splits = [None] if splits is None else splits
    dropped_sets = [None] + list(groups)
    Progress("drop_column_importance", verbose)(
        f"fitting {len(dropped_sets)} models (the baseline and one without each "
        f"of {len(groups)} features or groups) on {len(splits)} splits, "
        f"totalling {len(dropped_sets) * len(splits)} fits"
    )
    scores = Parallel(n_jobs=n_jobs, verbose=verbose)(
        delayed(_fit_and_score)(
            estimator, X, y, sample_weight, fit_params, dropped, split, scorer
        )
        for dropped in dropped_sets
        for split in splits
    )
    scores, metrics = stack_scores(scores)
    scores = scores.reshape(len(dropped_sets), len(splits), *scores.shape[1:])
    baseline = scores[0]
    importances = baseline - scores[1:]
    return per_metric(
        metrics,
        scoring,
        lambda metric, metric_scoring: importance_result(
            importances[metric],
            labels,
            groups=groups,
            baseline_score=float(baseline[metric].mean()),
            baseline_scores=baseline[metric],
            evaluation=evaluation,
            method="drop_column",
            scoring=metric_scoring,
            random_state=seed,
        ),
    )
