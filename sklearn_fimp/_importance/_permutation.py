"""Permutation importance on rows the model did not train on."""

import numbers
from functools import partial
from typing import NamedTuple

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs

from .._engine import (
    permuted_scores,
    tree_ensemble,
    worth_rerouting,
)
from .._engine._kept import kept_engine_input
from .._utils._compat import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    validate_params,
)
from .._utils._frames import assign_permuted, restore_columns, take_rows, writable_copy
from .._utils._progress import Progress
from .._utils._random import (
    draw_seed,
    evaluation_rows,
    permutation_seed,
    row_permutations,
)
from .._utils._result import importance_result
from .._utils._scoring import (
    MULTIMETRIC_SCORING_CONSTRAINT,
    get_scorer,
    metric_scorer,
    per_metric,
    score,
    score_table,
)
from .._utils._validation import (
    check_inputs,
    explain_input_errors,
    has_infinity,
)
from ._groups import UNGROUPED_OPTIONS, resolve_groups
from ._linear import LinearInputs, linear_inputs
from ._pipeline import pipeline_inputs


def _batches(items, n_jobs):
    """Split ``items`` into at most ``effective_n_jobs`` contiguous batches."""
    n_batches = max(1, min(len(items), effective_n_jobs(n_jobs)))
    return [list(b) for b in np.array_split(np.arange(len(items)), n_batches)]


def _permuted_scores(estimator, X, y, sample_weight, groups, permutations, scorer):
    """Scores after permuting each group; one copy of X for the batch."""
    X_work = writable_copy(X)
    scores = {}
    for g, columns in enumerate(groups):
        for r, permutation in enumerate(permutations):
            X_work = assign_permuted(X_work, X, columns, permutation)
            scores[g, r] = score(scorer, estimator, X_work, y, sample_weight)
        X_work = restore_columns(X_work, X, columns)
    return score_table(scores, len(groups), len(permutations))


def generic_permuted_scores(
    estimator, X, y, sample_weight, groups, permutations, scorer, n_jobs, verbose=0
):
    """Score of ``estimator`` with each group permuted by each permutation.

    The reference path: predict every row for every group and repeat. Works
    for any fitted estimator or Pipeline. Groups are split into one batch
    per worker, so that the fitted estimator is pickled once per worker when
    the joblib backend ships tasks (loky, Dask); X, passed as an argument of
    its own, is memory-mapped or scattered by joblib.

    Returns
    -------
    scores : ndarray of shape (n_groups, n_repeats) or \
            (n_groups, n_repeats, n_metrics)
    """
    batches = _batches(groups, n_jobs)
    results = Parallel(n_jobs=n_jobs, verbose=verbose)(
        delayed(_permuted_scores)(
            estimator,
            X,
            y,
            sample_weight,
            [groups[g] for g in batch],
            permutations,
            scorer,
        )
        for batch in batches
    )
    return np.concatenate(results, axis=0)


@explain_input_errors
@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like"],
        "y": ["array-like"],
        "scoring": MULTIMETRIC_SCORING_CONSTRAINT,
        "n_repeats": [Interval(numbers.Integral, 1, None, closed="left")],
        "groups": [list, tuple, dict, StrOptions({"auto"}), None],
        "ungrouped": [StrOptions(set(UNGROUPED_OPTIONS))],
        "max_samples": [
            Interval(numbers.Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
            None,
        ],
        "sample_weight": ["array-like", None],
        "n_jobs": [numbers.Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def permutation_importance(
    estimator,
    X,
    y,
    *,
    scoring=None,
    n_repeats=5,
    groups=None,
    ungrouped="separate",
    max_samples=None,
    sample_weight=None,
    n_jobs=None,
    verbose=0,
    random_state=None,
):
    """Permutation importance of features or groups on validation rows.

    The importance of a feature is the drop in score when its column is
    randomly permuted in rows the model did not train on, without
    retraining. A group is permuted as a block: the same row permutation for
    all its columns, which keeps their relation to each other and breaks
    only their relation to the target and to the other features. Raw score
    drops are returned, not normalised: their size is meaningful (a drop in
    accuracy, R², or whatever ``scoring`` measures) and they need not sum to
    anything.

    For the same ``random_state``, the permutations, and hence the
    importances, are those of :func:`sklearn.inspection.permutation_importance`
    (with ``max_samples``, this function also computes the baseline score on
    the subsampled rows, so that both scores compare the same rows).

    Parameters
    ----------
    estimator : estimator
        A fitted estimator or Pipeline, any kind.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Validation rows, of the type the estimator was fitted on (pandas and
        polars frames are permuted as frames; column names become feature
        names).
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Targets of the validation rows.
    scoring : str, callable, list, tuple, dict or None, default=None
        A scikit-learn scorer name or a callable ``scorer(estimator, X, y)``;
        None uses ``estimator.score`` (accuracy or R²). Several metrics, as
        scikit-learn accepts them: a list or tuple of scorer names, a dict
        ``{name: scorer}``, or a callable returning a dict
        ``{name: score}``; the result is then a dict of results, one per
        metric, and each permutation is predicted once and scored by every
        metric (the importances of each equal a call with that metric
        alone).
    n_repeats : int, default=5
        Number of permutations per feature or group.
    groups : None, "auto", list or dict, default=None
        None: each feature alone. A list whose items are a feature (name or
        position) or a list of features, or a dict ``{label: features}``;
        groups may overlap. "auto": the groups of :func:`feature_groups`.
    ungrouped : {"separate", "together", "drop"}, default="separate"
        Features no group mentions get a group each, share one group labelled
        "other", or are left out.
    max_samples : int, float or None, default=None
        Evaluate on this many rows (or this fraction of rows), drawn once
        without replacement with ``random_state``; None: all rows. A few
        thousand rows usually rank features as the full set does, at a
        fraction of the cost.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights passed to the scorer.
    n_jobs : int or None, default=None
        Number of jobs to run in parallel over groups (joblib semantics;
        ``joblib.parallel_config(backend="dask")`` runs them on a Dask
        cluster, with the same results).
    verbose : int, default=0
        Progress messages on stderr: a line per stage, and joblib's for the
        parallel jobs.
    random_state : int, RandomState instance or None, default=None
        Seed of the permutations and of the row subsample.

    Returns
    -------
    result : Bunch, or dict of Bunch
        With several metrics in ``scoring``, a dict ``{metric name:
        result}`` (as scikit-learn returns), each result as follows.

        importances : ndarray of shape (n_groups, n_repeats)
            Baseline score minus permuted score, per permutation.
        importances_mean, importances_std : ndarray of shape (n_groups,)
        feature_names : ndarray of shape (n_groups,)
            Feature names, or group labels.
        groups : list of ndarray
            Column positions in each group.
        baseline_score : float
            Score of the unpermuted rows.
        method, scoring, n_repeats, max_samples, random_state
            What is needed to reproduce the result (``random_state`` is the
            integer seed actually used).
        pipeline_paths : ndarray of str of shape (n_groups,)
            Only for a Pipeline ending in a model the tree engine reads (the
            user guide's "Your model is a Pipeline"): how each column or
            group was measured, all exactly: "block" (the engine permuted the
            model inputs it alone feeds), "transformed" (the inputs it mixes
            with other columns took the transform of the permuted rows, in
            the engine), "predicted" (every row predicted, where that was
            faster) or "unused" (it feeds no model input: 0). The
            per-model-input importances are those of ``pipeline[-1]`` on
            ``pipeline[:-1].transform(X)``.

    See Also
    --------
    oob_permutation_importance : The same on a forest's out-of-bag rows.
    drop_column_importance : Retrain without each feature instead.

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_fimp import permutation_importance
    >>> X, y = make_regression(n_samples=200, n_features=3, n_informative=1,
    ...                        random_state=0)
    >>> model = LinearRegression().fit(X[:100], y[:100])
    >>> result = permutation_importance(model, X[100:], y[100:], random_state=0)
    >>> int(result.importances_mean.argmax())
    1
    """
    X, feature_names, y, sample_weight = check_inputs(estimator, X, y, sample_weight)
    labels, groups = resolve_groups(groups, feature_names, X, ungrouped=ungrouped)
    return _permutation_importance(
        estimator,
        X,
        y,
        labels=labels,
        groups=groups,
        seed=draw_seed(random_state),
        sample_weight=sample_weight,
        scoring=scoring,
        n_repeats=n_repeats,
        max_samples=max_samples,
        n_jobs=n_jobs,
        verbose=verbose,
    )


class _EngineRoutes(NamedTuple):
    """How the tree engine reaches the model, and which groups it scores.

    ``ensemble`` is the estimator read as a tree ensemble (its input
    ``X_engine``), or None; ``through`` is a Pipeline whose model the engine
    reads (``pipeline_inputs``), or a linear model alone or ending a
    Pipeline (``linear_inputs``), or None. ``rerouted`` marks the groups the
    engine scores, and ``unused`` those the Pipeline's model never reads
    (rerouted too: nothing to score)."""

    ensemble: object
    X_engine: object
    through: object
    rerouted: np.ndarray
    unused: np.ndarray


def _engine_routes(estimator, X_eval, groups):
    """The :class:`_EngineRoutes` of ``estimator`` on ``X_eval``."""
    ensemble = tree_ensemble(estimator)
    X_engine = None
    rerouted = np.zeros(len(groups), dtype=bool)
    if ensemble is not None:
        X_engine = kept_engine_input(estimator, ensemble, X_eval)
        rerouted = worth_rerouting(ensemble, X_engine, groups)
    # a Pipeline whose model the engine reads: the engine on the model's inputs
    through = None
    if ensemble is None:
        through = pipeline_inputs(estimator, X_eval, groups)
    if ensemble is None and through is None:
        through = linear_inputs(estimator, X_eval, groups)
    unused = np.zeros(len(groups), dtype=bool)
    if through is not None:
        unused = ~through.feeds_model()
        fed = np.flatnonzero(~unused)
        rerouted[fed] = through.worth_rerouting(fed)
        rerouted[unused] = True
    return _EngineRoutes(ensemble, X_engine, through, rerouted, unused)


def _engine_permuted_scores(
    estimator,
    routes,
    groups,
    engine_groups,
    X_eval,
    y_eval,
    weight_eval,
    *,
    permutations,
    scorer,
    baseline,
    n_jobs,
    scoring,
    progress,
):
    """The permuted scores of ``engine_groups`` from the tree engine, and the
    baseline score: ``baseline`` when given, else the engine's score of the
    unpermuted rows when its outputs are the model's (else None)."""
    through = routes.through
    # the outputs are the model's (the trees added in its order, or a linear
    # model's own raw outputs); infinity: the model's predict decides (most
    # reject it, by name)
    exact = (
        True
        if isinstance(through, LinearInputs)
        else (
            routes.ensemble if through is None else through.ensemble
        ).adapter.exact_outputs
    )
    from_engine = baseline is None and exact and not has_infinity(X_eval)
    engine = (
        partial(through.permuted_scores, groups, engine_groups)
        if through is not None
        else partial(
            permuted_scores,
            estimator,
            routes.ensemble,
            routes.X_engine,
            groups=[groups[g] for g in engine_groups],
        )
    )
    engine_scores = engine(
        y=y_eval,
        sample_weight=weight_eval,
        permutations=permutations,
        scorer=scorer,
        n_jobs=n_jobs,
        scoring=scoring,
        progress=progress,
        baseline=from_engine,
    )
    if from_engine:
        return engine_scores
    return engine_scores, baseline


def _permutation_importance(
    estimator,
    X,
    y,
    *,
    labels,
    groups,
    seed,
    sample_weight=None,
    scoring=None,
    n_repeats=5,
    max_samples=None,
    n_jobs=None,
    verbose=0,
):
    """:func:`permutation_importance` on validated input: X a numpy array or
    frame of the model's columns, y an array, ``groups`` the column
    positions of each of ``labels`` and ``seed`` an int."""
    progress = Progress("permutation_importance", verbose)
    shuffle_seed = permutation_seed(seed)
    rows = evaluation_rows(shuffle_seed, X.shape[0], max_samples)
    X_eval, y_eval = take_rows(X, rows), take_rows(y, rows)
    weight_eval = take_rows(sample_weight, rows)
    permutations = row_permutations(
        shuffle_seed, y_eval.shape[0], n_repeats, n_total=X.shape[0]
    )
    if scoring is None or isinstance(scoring, str):
        # one metric: the engine, where it runs, scores the unpermuted rows
        # from the outputs it computes anyway (the model's predictions, its
        # trees added in its order: the adapter's exact_outputs), which saves
        # the Pipeline's transform and the model's predict
        scorer, baseline, metrics = get_scorer(estimator, scoring), None, None
    else:
        scorer, baseline, metrics = metric_scorer(
            estimator, scoring, X_eval, y_eval, weight_eval
        )
    scores = np.empty((len(groups), n_repeats, *np.shape(baseline)))
    routes = _engine_routes(estimator, X_eval, groups)
    rerouted, unused = routes.rerouted, routes.unused
    progress(
        f"scoring {len(groups)} features or groups x {n_repeats} repeats on "
        f"{y_eval.shape[0]} rows ({int(rerouted.sum())} with the tree engine)"
    )
    engine_groups = np.flatnonzero(rerouted & ~unused)
    if len(engine_groups):
        scores[engine_groups], baseline = _engine_permuted_scores(
            estimator,
            routes,
            groups,
            engine_groups,
            X_eval,
            y_eval,
            weight_eval,
            permutations=permutations,
            scorer=scorer,
            baseline=baseline,
            n_jobs=n_jobs,
            scoring=scoring,
            progress=progress,
        )
    if baseline is None:
        baseline = score(scorer, estimator, X_eval, y_eval, weight_eval)
    scores[unused] = baseline  # no prediction changes: importance 0
    if not rerouted.all():
        scores[~rerouted] = generic_permuted_scores(
            estimator,
            X_eval,
            y_eval,
            weight_eval,
            [groups[g] for g in np.flatnonzero(~rerouted)],
            permutations,
            scorer,
            n_jobs,
            verbose,
        )
    progress("done")
    importances = baseline - scores
    paths = None if routes.through is None else routes.through.paths(rerouted)
    return per_metric(
        metrics,
        scoring,
        lambda metric, metric_scoring: importance_result(
            importances[metric],
            labels,
            groups=groups,
            baseline_score=float(np.asarray(baseline)[metric]),
            method="permutation",
            scoring=metric_scoring,
            n_repeats=n_repeats,
            max_samples=max_samples,
            random_state=seed,
            **({} if paths is None else {"pipeline_paths": paths}),
        ),
    )
