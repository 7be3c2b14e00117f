"""Permutation importance on the out-of-bag rows of a bagged ensemble."""

import numbers
from typing import NamedTuple

import numpy as np
from joblib import Parallel, delayed
from sklearn.utils import Bunch

from .._engine import (
    oob_permuted_scores,
    per_tree_oob_drops,
    tree_ensemble,
    worth_rerouting,
)
from .._utils._compat import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    validate_params,
)
from .._utils._frames import assign_permuted, restore_columns, take_rows
from .._utils._progress import Progress
from .._utils._random import (
    MAX_SEED,
    draw_seed,
    evaluation_rows,
    permutation_seed,
    row_permutations,
)
from .._utils._result import importance_result
from .._utils._scoring import (
    MULTIMETRIC_SCORING_CONSTRAINT,
    MetricsScorer,
    get_scorer,
    per_metric,
    score_outputs,
    score_table,
)
from .._utils._validation import check_inputs, explain_input_errors
from ._bagging import (
    bagged_members,
    ensemble_input,
    member_input,
    member_outputs,
    oob_sums,
    score_oob_sums,
    stored_outputs,
)
from ._groups import UNGROUPED_OPTIONS, resolve_groups
from ._permutation import _batches
from ._pipeline import column_sums


def _forest_level_scores(
    ensemble, members, X, y, sample_weight, groups, permutations, scorer
):
    """OOB scores with each group permuted over all training rows."""
    X_work = X.copy()
    scores = {}
    for g, columns in enumerate(groups):
        for r, permutation in enumerate(permutations):
            X_work = assign_permuted(X_work, X, columns, permutation)
            total, count = oob_sums(ensemble, members, X_work)
            scores[g, r] = score_oob_sums(
                scorer, ensemble, total, count, y, sample_weight
            )
        X_work = restore_columns(X_work, X, columns)
    return score_table(scores, len(groups), len(permutations))


def _member_drops(
    ensemble, member, X, y, sample_weight, groups, n_repeats, seed, scorer
):
    """Breiman's per-tree importances for one member.

    Returns the member's out-of-bag baseline score and an array of shape
    (n_groups, n_repeats) of score drops when each group is permuted within
    the member's out-of-bag rows. A group the member never sees (outside its
    feature subset) cannot change its predictions and gets exactly 0.
    """
    rows = member.oob_rows
    X_member = member_input(member, X[rows])
    y_member, weight = y[rows], take_rows(sample_weight, rows)
    local = (
        np.arange(X.shape[1])
        if member.features is None
        else np.full(X.shape[1], -1, dtype=np.intp)
    )
    if member.features is not None:
        local[member.features] = np.arange(len(member.features))

    def member_score(X_rows):
        outputs = stored_outputs(
            ensemble, member_outputs(ensemble, member.estimator, X_rows)
        )
        return score_outputs(scorer, outputs, y_member, weight)

    baseline = member_score(X_member)
    generator = np.random.RandomState(seed)
    permutations = [generator.permutation(len(rows)) for _ in range(n_repeats)]
    X_work = X_member.copy()
    drops = np.zeros((len(groups), n_repeats, *np.shape(baseline)))
    for g, columns in enumerate(groups):
        columns = local[columns]
        columns = columns[columns >= 0]
        if not len(columns):
            continue
        for r, permutation in enumerate(permutations):
            X_work = assign_permuted(X_work, X_member, columns, permutation)
            drops[g, r] = baseline - member_score(X_work)
        X_work = restore_columns(X_work, X_member, columns)
    return baseline, drops


def _batch_member_drops(
    estimator, ensemble, X, y, sample_weight, batch, groups, n_repeats, scorer, scoring
):
    """Per-tree importances of a batch of ``(position, member, seed)``.

    One task per batch, not per tree: the fitted ensemble is pickled once
    per task (a joblib backend that ships work, such as loky or Dask, would
    otherwise send the whole model with every tree), while X, passed as an
    argument of its own, is memory-mapped (loky) or scattered once (Dask).
    """
    if ensemble is None:
        return [
            _member_drops(
                estimator, member, X, y, sample_weight, groups, n_repeats, seed, scorer
            )
            for _, member, seed in batch
        ]
    return [
        per_tree_oob_drops(
            estimator,
            ensemble,
            t,
            member.oob_rows,
            X,
            y,
            sample_weight,
            groups,
            n_repeats,
            seed,
            scorer,
            scoring,
        )
        for t, member, seed in batch
    ]


def _check_non_finite_rows(members, X):
    """Let each member's own ``predict`` check the rows holding NaN or
    infinity: the tree engine reads the trees directly, so without this a
    value the model rejects (infinity; NaN for trees without missing-value
    support) would not raise."""
    X = np.asarray(X)
    non_finite = ~np.isfinite(X).all(axis=1)
    if non_finite.any():
        for member in members:
            member.estimator.predict(member_input(member, X[non_finite]))


def _restrict_to_rows(members, rows, n_rows):
    """Members whose out-of-bag rows are renumbered as positions in ``rows``
    (rows outside ``rows`` are left out)."""
    if rows is None:
        return members
    position = np.full(n_rows, -1, dtype=np.intp)
    position[rows] = np.arange(len(rows))
    restricted = []
    for member in members:
        kept = position[member.oob_rows]
        restricted.append(member._replace(oob_rows=np.sort(kept[kept >= 0])))
    return restricted


@explain_input_errors
@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like"],
        "y": ["array-like"],
        "per_tree": ["boolean"],
        "scale": ["boolean"],
        "n_repeats": [Interval(numbers.Integral, 1, None, closed="left")],
        "groups": [list, tuple, dict, StrOptions({"auto"}), None],
        "ungrouped": [StrOptions(set(UNGROUPED_OPTIONS))],
        "scoring": MULTIMETRIC_SCORING_CONSTRAINT,
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
def oob_permutation_importance(
    estimator,
    X,
    y,
    *,
    per_tree=False,
    scale=False,
    n_repeats=1,
    groups=None,
    ungrouped="separate",
    scoring=None,
    max_samples=None,
    sample_weight=None,
    n_jobs=None,
    verbose=0,
    random_state=None,
):
    """Permutation importance on a bagged ensemble's out-of-bag rows.

    Every member of a bagged ensemble has rows it never trained on (its
    out-of-bag rows), so the training set doubles as a validation set and no
    rows need be held out.

    - Forest level (``per_tree=False``): permute a feature's column over all
      training rows, predict each row with only the members for which it is
      out of bag (averaging probabilities, or values), and score; the
      importance is the out-of-bag score minus the permuted one. The
      baseline equals the model's ``oob_score_`` for the default scoring.
    - Per tree (``per_tree=True``, Breiman 2001; R randomForest's
      ``importance(type=1)``): for each member ``t`` with out-of-bag rows
      ``B_t``, ``PI_t(j)`` is its score on ``B_t`` minus its score on ``B_t``
      with column ``j`` permuted within ``B_t``; the importance is the mean of
      ``PI_t(j)`` over members. A member that never splits on ``j`` has
      ``PI_t(j) = 0``. With ``scale=True`` the mean is divided by its standard
      error, ``sd_t(PI_t(j)) / sqrt(n_members)``, R's z-score (0 where all
      ``PI_t(j)`` are 0).

    Parameters
    ----------
    estimator : estimator
        A fitted RandomForest*, ExtraTrees* or Bagging* model trained with
        ``bootstrap=True`` (Bagging's feature subsets are respected).
    X : array-like or DataFrame of shape (n_samples, n_features)
        The training rows, in the order passed to ``fit``.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        The training targets.
    per_tree : bool, default=False
        Breiman's per-tree importance instead of the forest-level one.
    scale : bool, default=False
        With ``per_tree=True``, return z-scores instead of mean drops.
    n_repeats : int, default=1
        Number of permutations per feature or group.
    groups : None, "auto", list or dict, default=None
        As in :func:`permutation_importance`.
    ungrouped : {"separate", "together", "drop"}, default="separate"
        As in :func:`permutation_importance`.
    scoring : str, callable, list, tuple, dict or None, default=None
        A scorer name or callable; None is accuracy for classifiers and R²
        for regressors. Scorers receive the aggregated out-of-bag
        predictions (or a member's own predictions, with ``per_tree``).
        Several metrics (a list or tuple of scorer names, a dict of
        scorers, or a callable returning a dict), as in
        :func:`permutation_importance`: each permutation is predicted once
        and scored by every metric, and the result is a dict of results,
        one per metric.
    max_samples : int, float or None, default=None
        Evaluate on this many training rows (or this fraction of them),
        drawn once without replacement with ``random_state``; each is scored
        by the members for which it is out of bag, and permutations shuffle
        the drawn rows only. None: all rows. The cost of the forest-level
        importance grows with the number of rows; on large data a sample of
        some ten thousand rows usually ranks features as the full set does.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights passed to the scorer.
    n_jobs : int or None, default=None
        Parallel jobs over groups (forest level) or members (per tree),
        threads unless a joblib backend is configured
        (``joblib.parallel_config(backend="dask")`` runs them on a Dask
        cluster, with the same results).
    verbose : int, default=0
        Progress messages on stderr: a line per stage, and joblib's for the
        parallel jobs.
    random_state : int, RandomState instance or None, default=None
        Seed of the permutations and of the row sample.

    Returns
    -------
    result : Bunch, or dict of Bunch
        With several metrics in ``scoring``, a dict ``{metric name:
        result}``, each result as follows.

        importances : ndarray of shape (n_groups, n_repeats)
            Score drops (or z-scores with ``scale=True``), one column per
            permutation.
        importances_mean, importances_std : ndarray of shape (n_groups,)
        feature_names : ndarray of shape (n_groups,)
        groups : list of ndarray
        baseline_score : float
            Out-of-bag score (forest level), or the mean of the members'
            out-of-bag scores (per tree).
        tree_importances : ndarray of shape (n_groups, n_members)
            With ``per_tree=True`` only: each member's ``PI_t``, averaged over
            repeats.
        method, per_tree, scale, scoring, n_repeats, max_samples, random_state

    Raises
    ------
    ValueError
        When the estimator has no out-of-bag rows, or X is not the training
        set it was fitted on.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from sklearn_fimp import oob_permutation_importance
    >>> X, y = make_classification(n_samples=300, n_features=4, n_informative=2,
    ...                            n_redundant=0, shuffle=False, random_state=0)
    >>> forest = RandomForestClassifier(n_estimators=50, random_state=0).fit(X, y)
    >>> result = oob_permutation_importance(forest, X, y, random_state=0)
    >>> result.importances_mean.round(2)
    array([0.1 , 0.42, 0.  , 0.01])
    """
    if scale and not per_tree:
        raise ValueError(
            "scale=True is the z-score of per-tree importances; pass "
            "per_tree=True with it, or scale=False."
        )
    X, feature_names, y, sample_weight = check_inputs(estimator, X, y, sample_weight)
    labels, groups = resolve_groups(groups, feature_names, X, ungrouped=ungrouped)
    return _oob_permutation_importance(
        estimator,
        X,
        y,
        labels=labels,
        groups=groups,
        seed=draw_seed(random_state),
        sample_weight=sample_weight,
        scoring=scoring,
        n_repeats=n_repeats,
        per_tree=per_tree,
        scale=scale,
        max_samples=max_samples,
        n_jobs=n_jobs,
        verbose=verbose,
    )


class _OutOfBag(NamedTuple):
    """What every out-of-bag score of one call reads: the fitted ensemble
    (and its engine form, or None), its members with their out-of-bag rows,
    the evaluation rows of X (in the ensemble's input dtype), y and the
    weights, and the scorer."""

    estimator: object
    ensemble: object
    members: list
    X: np.ndarray
    y: np.ndarray
    sample_weight: np.ndarray | None
    scorer: object
    scoring: object


def _evaluated_rows(members, X, y, sample_weight, shuffle_seed, max_samples):
    """``(members, X, y, sample_weight)`` on the rows the importance is
    evaluated on: all of them, or ``max_samples`` drawn with
    ``shuffle_seed`` (``_utils.evaluation_rows``), in their order, each
    member's out-of-bag rows among them (at least one row must be)."""
    rows = evaluation_rows(shuffle_seed, X.shape[0], max_samples)
    if rows is None:
        return members, X, y, sample_weight
    rows = np.sort(rows)
    members = _restrict_to_rows(members, rows, X.shape[0])
    if not any(len(m.oob_rows) for m in members):
        raise ValueError(
            f"max_samples={max_samples} keeps no row that is out of bag for "
            "any member; pass a larger max_samples, or None."
        )
    return members, X[rows], y[rows], take_rows(sample_weight, rows)


def _oob_permutation_importance(
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
    per_tree=False,
    scale=False,
    max_samples=None,
    n_jobs=None,
    verbose=0,
):
    """:func:`oob_permutation_importance` on validated input: X the
    estimator's training rows (array or frame), y an array, ``groups`` the
    column positions of each of ``labels`` and ``seed`` an int."""
    through = column_sums(estimator, "oob_permutation")
    if through is not None:
        return _through_pipeline(
            through,
            X,
            y,
            labels=labels,
            groups=groups,
            seed=seed,
            sample_weight=sample_weight,
            scoring=scoring,
            n_repeats=n_repeats,
            per_tree=per_tree,
            scale=scale,
            max_samples=max_samples,
            n_jobs=n_jobs,
            verbose=verbose,
        )
    progress = Progress("oob_permutation_importance", verbose)
    members = bagged_members(estimator, X.shape[0])
    X_checked = ensemble_input(estimator, X)
    shuffle_seed = permutation_seed(seed)
    members, X_checked, y, sample_weight = _evaluated_rows(
        members, X_checked, y, sample_weight, shuffle_seed, max_samples
    )
    scorer, metrics = _oob_scorer(
        estimator, members, X_checked, y, sample_weight, scoring
    )
    oob = _OutOfBag(
        estimator,
        tree_ensemble(estimator),
        members,
        X_checked,
        y,
        sample_weight,
        scorer,
        scoring,
    )
    details = {
        "groups": groups,
        "method": "oob_permutation",
        "per_tree": per_tree,
        "scale": scale,
        "scoring": scoring,
        "n_repeats": n_repeats,
        "max_samples": max_samples,
        "random_state": seed,
    }
    if per_tree:
        importances, baseline, tree_importances = _per_tree_drops(
            oob, groups, n_repeats, seed, scale, n_jobs, verbose, progress
        )
        details["tree_importances"] = tree_importances
    else:
        permutations = row_permutations(
            shuffle_seed, y.shape[0], n_repeats, n_total=X.shape[0]
        )
        scores, baseline = _forest_level_drops(
            oob, groups, permutations, n_jobs, verbose, progress
        )
        importances = baseline - scores
    progress("done")
    tree_importances = details.pop("tree_importances", None)
    del details["scoring"]  # each metric's own

    def result_of(metric, metric_scoring):
        extra = {"scoring": metric_scoring}
        if tree_importances is not None:
            extra["tree_importances"] = tree_importances[metric]
        return importance_result(
            importances[metric],
            labels,
            baseline_score=float(np.asarray(baseline)[metric]),
            **details,
            **extra,
        )

    return per_metric(metrics, scoring, result_of)


def _through_pipeline(through, X, y, *, labels, groups, **options):
    """Out-of-bag permutation importance of a Pipeline's original columns:
    the forest's, on the model inputs of the training rows, each group
    permuting the block of inputs it feeds (a column's one-hot block, its
    scaled values): the same row permutation of every input of the block is
    what permuting the column gives when no input mixes it with others. A
    group that feeds no input (a dropped column) scores 0."""
    blocks, mixed = through.blocks(groups)
    for label, mixes in zip(labels, mixed):
        if mixes:
            raise ValueError(
                "oob_permutation_importance of a Pipeline permutes each "
                f"column's block of model inputs, and {label!r} feeds inputs "
                "that a step computes from other columns too (PolynomialFeatures, "
                "PCA, ...). Use permutation_importance on held-out rows, which "
                "transforms the permuted rows, or groups= to permute the mixed "
                "columns together."
            )
    fed = [g for g, block in enumerate(blocks) if len(block)]
    result = _oob_permutation_importance(
        through.model,
        through.transform(X),
        y,
        labels=[labels[g] for g in fed],
        groups=[blocks[g] for g in fed],
        **options,
    )

    def per_column(result):
        rows = np.zeros((len(groups), result.importances.shape[1]))
        rows[fed] = result.importances
        details = {
            key: value
            for key, value in result.items()
            if key not in _RECOMPUTED and key != "groups"
        }
        trees = result.get("tree_importances")
        if trees is not None:
            details["tree_importances"] = np.zeros((len(groups), trees.shape[1]))
            details["tree_importances"][fed] = trees
        return importance_result(rows, labels, groups=groups, **details)

    if isinstance(result, Bunch):
        return per_column(result)
    return {metric: per_column(r) for metric, r in result.items()}


#: Keys of a result that importance_result computes anew.
_RECOMPUTED = (
    "importances",
    "importances_mean",
    "importances_std",
    "feature_names",
    "tree_importances",
)


def _oob_scorer(estimator, members, X, y, sample_weight, scoring):
    """The scorer, and the metric names (None for one metric): several
    metrics are scored as one array (a callable's are known once it has
    scored the out-of-bag predictions)."""
    scorer = get_scorer(estimator, scoring)
    if isinstance(scoring, (list, tuple, dict)):
        return MetricsScorer(scorer, scoring), list(scoring)
    if not callable(scoring):
        return scorer, None
    total, count = oob_sums(estimator, members, X)
    value = score_oob_sums(scorer, estimator, total, count, y, sample_weight)
    if not isinstance(value, dict):
        return scorer, None
    return MetricsScorer(scorer, value), list(value)


def _forest_level_drops(oob, groups, permutations, n_jobs, verbose, progress):
    """Scores of the forest on its out-of-bag rows with each group permuted
    by each permutation (the tree engine where it pays, every row
    re-predicted elsewhere), and the unpermuted score."""
    n_repeats = len(permutations)
    rerouted = np.zeros(len(groups), dtype=bool)
    if oob.ensemble is not None:
        rerouted = worth_rerouting(
            oob.ensemble,
            oob.X,
            groups,
            tree_rows=[m.oob_rows for m in oob.members],
        )
    metric_names = getattr(oob.scorer, "names", None)
    scores = np.empty((len(groups), n_repeats, *np.shape(metric_names)))
    progress(
        f"scoring {len(groups)} features or groups x {n_repeats} repeats on "
        f"{oob.y.shape[0]} rows ({int(rerouted.sum())} with the tree engine)"
    )
    sums = None
    if rerouted.any():
        _check_non_finite_rows(oob.members, oob.X)
        engine_scores, *sums = oob_permuted_scores(
            oob.estimator,
            oob.ensemble,
            oob.members,
            oob.X,
            oob.y,
            oob.sample_weight,
            [groups[g] for g in np.flatnonzero(rerouted)],
            permutations,
            oob.scorer,
            n_jobs,
            scoring=oob.scoring,
            progress=progress,
        )
        scores[rerouted] = engine_scores
    plain = np.flatnonzero(~rerouted)
    if len(plain):
        results = Parallel(n_jobs=n_jobs, prefer="threads", verbose=verbose)(
            delayed(_forest_level_scores)(
                oob.estimator,
                oob.members,
                oob.X,
                oob.y,
                oob.sample_weight,
                [groups[plain[i]] for i in batch],
                permutations,
                oob.scorer,
            )
            for batch in _batches(plain, n_jobs)
        )
        scores[plain] = np.concatenate(results, axis=0)
    if sums is None:  # the engine, which sums them on its way, did not run
        sums = oob_sums(oob.estimator, oob.members, oob.X)
    baseline = score_oob_sums(
        oob.scorer, oob.estimator, *sums, oob.y, oob.sample_weight
    )
    return scores, baseline


def _per_tree_drops(oob, groups, n_repeats, seed, scale, n_jobs, verbose, progress):
    """Breiman's per-tree importances: the mean over members of each
    member's score drop on its own out-of-bag rows (z-scored with
    ``scale``), the mean of the members' baselines, and each member's drops
    averaged over repeats."""
    members = oob.members
    seeds = np.random.RandomState(seed).randint(MAX_SEED + 1, size=len(members))
    used = [t for t, m in enumerate(members) if len(m.oob_rows)]
    if scale and len(used) < 2:
        raise ValueError(
            "scale=True divides by the spread of per-tree importances, which "
            "needs at least two members with out-of-bag rows; pass scale=False "
            "or use more estimators."
        )
    batches = _batches(used, n_jobs)
    progress(
        f"scoring {len(groups)} features or groups x {n_repeats} repeats in "
        f"{len(used)} members, in {len(batches)} batches"
    )
    results = Parallel(n_jobs=n_jobs, prefer="threads", verbose=verbose)(
        delayed(_batch_member_drops)(
            oob.estimator,
            oob.ensemble,
            oob.X,
            oob.y,
            oob.sample_weight,
            [(used[i], members[used[i]], seeds[used[i]]) for i in batch],
            groups,
            n_repeats,
            oob.scorer,
            oob.scoring,
        )
        for batch in batches
    )
    results = [result for batch in results for result in batch]
    baselines = np.array([b for b, _ in results])
    # (n_members, n_groups, n_repeats[, n_metrics])
    drops = np.stack([d for _, d in results])
    importances = drops.mean(axis=0)
    if scale:
        spread = drops.std(axis=0, ddof=1) / np.sqrt(len(used))
        importances = np.divide(
            importances, spread, out=np.zeros_like(importances), where=spread > 0
        )
    tree_importances = np.moveaxis(drops.mean(axis=2), 0, 1)
    return importances, baselines.mean(axis=0), tree_importances
