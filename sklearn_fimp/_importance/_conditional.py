"""Conditional permutation importance: replace a column by a draw from its
distribution given the other features, and score the unchanged model."""

import numbers

import numpy as np
from joblib import Parallel, delayed
from scipy import stats
from sklearn.base import is_classifier, is_regressor
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from .._engine import (
    replaced_scorer_outputs,
    tree_ensemble,
    worth_rerouting,
)
from .._utils._compat import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    scorer_reads_labels_only,
    validate_params,
)
from .._utils._frames import restore_columns, take_rows, writable_copy
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
    SCORING_CONSTRAINT,
    StoredClassifierOutputs,
    StoredRegressorOutputs,
    get_scorer,
    score,
    score_outputs,
)
from .._utils._validation import check_inputs, explain_input_errors

# the SAMPLER_ constants, _sampler_model, fit_column_sampler and
# sampler_n_estimators are not used here: re-exported for the tests
from ._conditional_samplers import (  # noqa: F401
    SAMPLER_MAX_ROWS_PER_TREE,
    SAMPLER_MIN_SAMPLES_LEAF,
    SAMPLER_N_ESTIMATORS,
    SAMPLER_OOB_TREES,
    SAMPLERS,
    _sampler_model,
    fit_column_sampler,
    fit_samplers,
    replace_columns,
    sampler_n_estimators,
    samplers_of_rows,
)
from ._dependence import encode_features, target_kinds
from ._groups import UNGROUPED_OPTIONS, resolve_groups
from ._permutation import _batches

# ----------------------------------------------------------------------------
# Per-row losses, for the test


def row_losses(estimator, X, y):
    """Per-row loss of ``estimator`` on ``X``: squared error (summed over
    outputs) for regressors; for classifiers the Brier loss of
    ``predict_proba`` (0-1 loss of ``predict`` when it has none)."""
    if is_classifier(estimator) and y.ndim == 1:
        if hasattr(estimator, "predict_proba"):
            return _brier(estimator.predict_proba(X), estimator.classes_, y)
        return (estimator.predict(X) != y).astype(float)
    if is_classifier(estimator):
        return (estimator.predict(X) != y).sum(axis=1).astype(float)
    return _squared_errors(estimator.predict(X), y)


def score_and_row_losses(scorer, estimator, X, y, sample_weight=None):
    """The score and the per-row losses of ``estimator`` on ``X``; a
    regressor predicts once for both (regression scorers read ``predict``
    only)."""
    if is_regressor(estimator):
        prediction = estimator.predict(X)
        stored = StoredRegressorOutputs(prediction)
        value = score_outputs(scorer, stored, y, sample_weight)
        return value, _squared_errors(prediction, y)
    if _predicts_most_probable(estimator) and y.ndim == 1:
        proba = estimator.predict_proba(X)
        stored = StoredClassifierOutputs(estimator.classes_, proba=proba)
        value = score_outputs(scorer, stored, y, sample_weight)
        return value, _brier(proba, estimator.classes_, y)
    value = score(scorer, estimator, X, y, sample_weight)
    return value, row_losses(estimator, X, y)


def _predicts_most_probable(estimator):
    """Whether ``estimator`` is a scikit-learn tree or forest classifier,
    whose ``predict`` is the class of largest ``predict_proba`` and which has
    no ``decision_function``: its scores follow from ``predict_proba``
    alone."""
    return isinstance(
        estimator,
        (RandomForestClassifier, ExtraTreesClassifier, DecisionTreeClassifier),
    )


def _brier(proba, classes, y):
    truth = (y[:, None] == classes[None, :]).astype(float)
    return np.sum((proba - truth) ** 2, axis=1)


def _squared_errors(prediction, y):
    y = np.asarray(y, dtype=np.float64)
    error = (np.asarray(prediction, dtype=np.float64).reshape(y.shape) - y) ** 2
    return error if error.ndim == 1 else error.sum(axis=1)


def loss_pvalues(differences, weight=None, row_groups=None):
    """One-sided p-values of "the mean per-row loss difference is > 0".

    ``differences`` has shape (n_groups, n_rows): each row's loss with the
    group's columns replaced (averaged over the repeats) minus its loss
    with the original columns. A t-test over rows (Chamma et al., 2023):
    the rows are independent given the fitted model and sampler. With
    ``row_groups`` (one label per row: rows that hang together) the t-test
    is over the groups' (weighted) mean differences, weighted by the
    groups' total weights, which assumes independent groups instead of
    independent rows (a cluster-level test). A group of columns that
    changes no row's loss gets p = 1.
    """
    n_rows = differences.shape[1]
    weight = np.ones(n_rows) if weight is None else np.asarray(weight, float)
    if row_groups is not None:
        codes = np.unique(np.asarray(row_groups), return_inverse=True)[1].ravel()
        group_weight = np.bincount(codes, weights=weight)
        differences = np.stack(
            [np.bincount(codes, weights=d * weight) / group_weight for d in differences]
        ).reshape(len(differences), len(group_weight))
        weight = group_weight
    total = weight.sum()
    n_effective = total**2 / np.sum(weight**2)
    mean = differences @ weight / total
    variance = ((differences - mean[:, None]) ** 2) @ weight / total
    variance *= n_effective / max(n_effective - 1, 1)
    pvalues = np.ones(len(mean))
    spread = variance > 0
    t = mean[spread] / np.sqrt(variance[spread] / n_effective)
    pvalues[spread] = stats.t.sf(t, df=max(n_effective - 1, 1))
    return pvalues


# ----------------------------------------------------------------------------
# Scoring


def _replaced_scores(
    estimator, X, y, sample_weight, groups, samplers, permutations, uniforms, scorer
):
    """Scores and mean per-row losses after replacing each group's columns
    by each draw; one copy of X for the batch."""
    X_work = writable_copy(X)
    n_repeats = len(permutations)
    scores = np.empty((len(groups), n_repeats))
    losses = np.zeros((len(groups), y.shape[0]))
    for g, columns in enumerate(groups):
        for r in range(n_repeats):
            values = [s.draw(permutations[r], uniforms[r]) for s in samplers[g]]
            X_work = replace_columns(X_work, X, columns, values)
            scores[g, r], row_loss = score_and_row_losses(
                scorer, estimator, X_work, y, sample_weight
            )
            losses[g] += row_loss
        X_work = restore_columns(X_work, X, columns)
    return scores, losses / n_repeats


def generic_replaced_scores(
    estimator,
    X,
    y,
    sample_weight,
    groups,
    samplers,
    permutations,
    uniforms,
    scorer,
    n_jobs,
    verbose=0,
):
    """Score of ``estimator`` with each group's columns replaced by each
    conditional draw, predicting every row (any fitted model or Pipeline);
    one batch of groups per worker.

    Returns
    -------
    scores : ndarray of shape (n_groups, n_repeats)
    losses : ndarray of shape (n_groups, n_rows)
        Each row's loss, averaged over the repeats.
    """
    batches = _batches(groups, n_jobs)
    results = Parallel(n_jobs=n_jobs, verbose=verbose)(
        delayed(_replaced_scores)(
            estimator,
            X,
            y,
            sample_weight,
            [groups[g] for g in batch],
            [samplers[g] for g in batch],
            permutations,
            uniforms,
            scorer,
        )
        for batch in batches
    )
    return (
        np.concatenate([r[0] for r in results], axis=0),
        np.concatenate([r[1] for r in results], axis=0),
    )


def engine_replaced_scores(
    estimator,
    ensemble,
    X,
    X_engine,
    y,
    sample_weight,
    groups,
    samplers,
    permutations,
    uniforms,
    scorer,
    n_jobs,
    progress=None,
):
    """:func:`generic_replaced_scores` with the tree engine, for a model it
    serves: each draw is put into a copy of X and converted as the model's
    trees read it (``engine_input``), and only the rows whose paths split
    on a replaced column are re-routed.

    Returns
    -------
    scores : ndarray of shape (n_groups, n_repeats)
    differences : ndarray of shape (n_groups, n_rows)
        Each row's loss with the group replaced, averaged over the repeats,
        minus its loss unchanged (0 for a row no draw moves).
    """
    X_work = writable_copy(X)

    def values_of(g):
        nonlocal X_work
        columns = groups[g]
        values = []
        for permutation, uniform in zip(permutations, uniforms):
            draws = [s.draw(permutation, uniform) for s in samplers[g]]
            X_work = replace_columns(X_work, X, columns, draws)
            # the ensemble's adapter, read once (a new one would export
            # and parse the model again for every draw)
            values.append(ensemble.adapter.engine_input(X_work)[:, columns])
        X_work = restore_columns(X_work, X, columns)
        return values

    n_repeats = len(permutations)
    scores = np.empty((len(groups), n_repeats))
    differences = np.zeros((len(groups), y.shape[0]))
    base_losses = None
    for g, r, outputs, base_outputs in replaced_scorer_outputs(
        ensemble,
        X_engine,
        groups,
        values_of,
        n_repeats,
        n_jobs,
        # the per-row losses read no ranks; the scorer may
        ranks_matter=not scorer_reads_labels_only(scorer),
        progress=progress,
    ):
        if base_losses is None:
            base_losses = row_losses(base_outputs, None, y)
        scores[g, r] = score_outputs(scorer, outputs, y, sample_weight)
        differences[g] += row_losses(outputs, None, y) - base_losses
    return scores, differences / n_repeats


def conditional_draw_seeds(seed, n_rows, n_repeats, n_total):
    """The residual permutations, the uniform numbers of the categorical
    draws and the seed of the samplers, all derived from ``seed``: the
    evaluation rows and the permutations are those of
    :func:`~sklearn_fimp.permutation_importance` for the same seed."""
    shuffle_seed = permutation_seed(seed)
    permutations = row_permutations(shuffle_seed, n_rows, n_repeats, n_total=n_total)
    generator = np.random.RandomState(seed)
    uniform_seed, sampler_seed = generator.randint(MAX_SEED + 1, size=2)
    uniforms = np.random.RandomState(uniform_seed).random_sample((n_repeats, n_rows))
    return permutations, uniforms, int(sampler_seed)


def _check_missing(encoded, X_names):
    missing = np.isnan(encoded).any(axis=0)
    if missing.any():
        names = ", ".join(repr(str(n)) for n in X_names[missing][:5])
        raise ValueError(
            f"X has missing values in column(s) {names}; conditional "
            "permutation importance models each column from the others and "
            "needs complete columns. Impute them first (the estimator then "
            "sees the imputed X), or use permutation_importance."
        )


@explain_input_errors
@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like"],
        "y": ["array-like"],
        "scoring": SCORING_CONSTRAINT,
        "n_repeats": [Interval(numbers.Integral, 1, None, closed="left")],
        "groups": [list, tuple, dict, StrOptions({"auto"}), None],
        "ungrouped": [StrOptions(set(UNGROUPED_OPTIONS))],
        "sampler": [StrOptions(set(SAMPLERS))],
        "categorical_threshold": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_samples": [
            Interval(numbers.Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
            None,
        ],
        "sample_weight": ["array-like", None],
        "row_groups": ["array-like", None],
        "n_jobs": [numbers.Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def conditional_permutation_importance(
    estimator,
    X,
    y,
    *,
    scoring=None,
    n_repeats=5,
    groups=None,
    ungrouped="separate",
    sampler="forest",
    categorical_threshold=10,
    max_samples=None,
    sample_weight=None,
    row_groups=None,
    n_jobs=None,
    verbose=0,
    random_state=None,
):
    """Conditional permutation importance, with one-sided p-values.

    The importance of a feature is the drop in score when its column is
    replaced by a draw from its distribution *given the other features*, in
    rows the model did not train on, without retraining. Unlike ordinary
    permutation, the draw keeps the column's relation to the other
    features, so the model is only asked about plausible rows: a duplicated
    column or a correlated stand-in the target does not use gets about 0,
    as with drop-column importance, at the cost of one model of the column
    instead of one refit. It answers "what does this feature add, given the
    others?".

    The draw (the "CPI" of Chamma et al., 2023): a model of the column from
    the other columns, fitted once on ``X``, gives each row a prediction
    (out of bag for the forest sampler, so a row's own value does not enter
    it); the draw is that prediction plus a permutation of the residuals.
    Categorical and few-valued columns get a classifier, and a draw from
    its predicted probabilities. The samplers are fitted once and reused
    for every repeat. A group's columns are each modelled from the columns
    outside the group and replaced together (numeric ones with the same
    residual permutation).

    The p-value of a feature tests whether its replacement raises the
    model's loss: a one-sided t-test over rows of each row's loss with the
    feature replaced (averaged over the repeats) minus its loss with the
    original values; the loss is the squared error for regressors and the
    Brier loss of ``predict_proba`` for classifiers (the 0-1 loss without
    it), whatever ``scoring`` is. Measured on features independent of the
    target given the others (100 simulated data sets per regime, 300
    validation rows), it is valid with a linear model and the linear
    sampler (5.7% of 300 null p-values at most 0.05, 1.0% at most 0.01)
    and within the bounds of a valid test with forests and the forest
    sampler, at their upper edge (7.7% of 700 null p-values at most 0.05,
    2.1% at most 0.01); see the user guide for the calibration figures and
    the assumptions.

    Parameters
    ----------
    estimator : estimator
        A fitted estimator or Pipeline, any kind.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Validation rows, of the type the estimator was fitted on (numpy,
        pandas or polars), without missing values. The samplers are fitted
        on them.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Targets of the validation rows.
    scoring : str, callable or None, default=None
        A scikit-learn scorer name or a callable ``scorer(estimator, X, y)``;
        None uses ``estimator.score`` (accuracy or R²).
    n_repeats : int, default=5
        Number of draws per feature or group.
    groups : None, "auto", list or dict, default=None
        None: each feature alone. A list whose items are a feature (name or
        position) or a list of features, or a dict ``{label: features}``;
        groups may overlap. "auto": the groups of :func:`feature_groups`.
    ungrouped : {"separate", "together", "drop"}, default="separate"
        Features no group mentions get a group each, share one group labelled
        "other", or are left out.
    sampler : {"forest", "linear"}, default="forest"
        The model of each column given the others. "forest": a random forest
        (each tree grown on a bootstrap sample of at most 2,000 rows, leaves
        of at least 5 rows, every column a candidate at each split) whose
        out-of-bag predictions are used, shrunk towards the column's mean
        along the least-squares line of the column on them (so that a draw
        has the column's variance, not more); it follows non-linear
        relations. A column the others do not predict (out-of-bag R², or
        Brier skill score for a categorical column, of 0 or below) is drawn
        by plain permutation. It has enough trees for each row to be out of bag for
        about 17 of them: 47 on up to 2,000 rows, fewer on more rows (19 on
        20,000). "linear": ridge regression (logistic
        regression for categorical columns) on the standardised other
        columns, much faster, right when the relations between features are
        linear.
    categorical_threshold : int, default=10
        Numeric columns with at most this many distinct values are drawn by
        a classifier, as string and categorical columns are.
    max_samples : int, float or None, default=None
        Evaluate on this many rows (or this fraction of rows), drawn once
        without replacement with ``random_state``; None: all rows.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights passed to the scorer and used in the test.
    row_groups : array-like of shape (n_samples,), default=None
        A label per row for rows that hang together (a customer's, a
        patient's, a store's; for time-ordered rows, consecutive blocks
        longer than the dependence, such as ``np.arange(n) // 50``): the
        p-values' t-test is then over the groups' mean loss differences,
        assuming independent groups rather than independent rows. The
        importances do not change. None: every row its own group.
    n_jobs : int or None, default=None
        Number of jobs for the forest samplers and for scoring groups in
        parallel (joblib semantics).
    verbose : int, default=0
        Progress messages on stderr.
    random_state : int, RandomState instance or None, default=None
        Seed of the samplers, the draws and the row subsample.

    Returns
    -------
    result : Bunch
        importances : ndarray of shape (n_groups, n_repeats)
            Baseline score minus the score with the replaced columns, per
            draw.
        importances_mean, importances_std : ndarray of shape (n_groups,)
        pvalues : ndarray of shape (n_groups,)
            One-sided p-values of "the replacement raises the loss".
        sampler_scores : list of ndarray
            Out-of-bag R² (accuracy for categorical columns) of each
            column's sampler, in the order of ``groups`` (in-sample for the
            linear sampler): how well the other features predict it.
        feature_names : ndarray of shape (n_groups,)
            Feature names, or group labels.
        groups : list of ndarray
            Column positions in each group.
        baseline_score : float
            Score of the unchanged rows.
        method, scoring, n_repeats, sampler, max_samples, random_state
            What is needed to reproduce the result.

    See Also
    --------
    permutation_importance : Permute each column on its own instead.
    drop_column_importance : Retrain without each feature.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_fimp import conditional_permutation_importance
    >>> rng = np.random.RandomState(0)
    >>> cause = rng.normal(size=600)
    >>> stand_in = cause + rng.normal(scale=0.3, size=600)
    >>> X = np.column_stack([cause, stand_in, rng.normal(size=600)])
    >>> y = cause + rng.normal(scale=0.5, size=600)
    >>> model = LinearRegression().fit(X[:300], y[:300])
    >>> result = conditional_permutation_importance(
    ...     model, X[300:], y[300:], sampler="linear", random_state=0)
    >>> [bool(p < 0.01) for p in result.pvalues]
    [True, False, False]
    """
    X, feature_names, y, sample_weight = check_inputs(estimator, X, y, sample_weight)
    labels, groups = resolve_groups(groups, feature_names, X, ungrouped=ungrouped)
    if row_groups is not None:
        row_groups = np.asarray(row_groups)
        if row_groups.shape != (X.shape[0],):
            raise ValueError(
                f"row_groups: {row_groups.shape[0] if row_groups.ndim else 0} "
                f"labels for {X.shape[0]} rows of X; pass one label per row "
                "(or None)."
            )
    return _conditional_permutation_importance(
        estimator,
        X,
        y,
        labels=labels,
        groups=groups,
        seed=draw_seed(random_state),
        sample_weight=sample_weight,
        row_groups=row_groups,
        scoring=scoring,
        n_repeats=n_repeats,
        sampler=sampler,
        categorical_threshold=categorical_threshold,
        max_samples=max_samples,
        n_jobs=n_jobs,
        verbose=verbose,
    )


def fitted_samplers(
    X, groups, sampler, categorical_threshold, seed, n_jobs, probe_groups=0
):
    """The samplers of every group of X's columns, fitted on X's rows (one
    list per group, one sampler per column; see ``fit_samplers``, which the
    last ``probe_groups`` groups, probes, are not read by)."""
    encoded = encode_features(X)
    _check_missing(encoded.values, encoded.names)
    kinds = target_kinds(encoded, categorical_threshold)
    return fit_samplers(
        X, encoded.values, kinds, groups, sampler, seed, n_jobs, probe_groups
    )


def _conditional_permutation_importance(
    estimator,
    X,
    y,
    *,
    labels,
    groups,
    seed,
    sample_weight=None,
    row_groups=None,
    scoring=None,
    n_repeats=5,
    sampler="forest",
    categorical_threshold=10,
    max_samples=None,
    samplers=None,
    probe_groups=0,
    n_jobs=None,
    verbose=0,
):
    """:func:`conditional_permutation_importance` on validated input: X a
    numpy array or frame of the model's columns, y an array, ``groups`` the
    column positions of each of ``labels`` and ``seed`` an int.

    ``samplers``: every group's samplers of X's rows, fitted once elsewhere
    (:func:`fitted_samplers`; a selector's rounds measure the same columns
    again and again), or None to fit them here on the scored rows;
    ``probe_groups``: the last groups are a selector's probes, which no
    sampler reads (``fit_samplers``)."""
    progress = Progress("conditional_permutation_importance", verbose)
    rows = evaluation_rows(permutation_seed(seed), X.shape[0], max_samples)
    X_eval, y_eval = take_rows(X, rows), take_rows(y, rows)
    weight_eval = take_rows(sample_weight, rows)
    n_rows = y_eval.shape[0]
    permutations, uniforms, sampler_seed = conditional_draw_seeds(
        seed, n_rows, n_repeats, X.shape[0]
    )
    if samplers is None:
        progress(f"fitting the {sampler} samplers of {len(groups)} features or groups")
        sampling = (sampler, categorical_threshold, sampler_seed, n_jobs, probe_groups)
        samplers = fitted_samplers(X_eval, groups, *sampling)
    else:
        samplers = samplers_of_rows(samplers, rows)
    scorer = get_scorer(estimator, scoring)
    baseline, baseline_losses = score_and_row_losses(
        scorer, estimator, X_eval, y_eval, weight_eval
    )
    ensemble = tree_ensemble(estimator)
    rerouted = np.zeros(len(groups), dtype=bool)
    if ensemble is not None:
        X_engine = ensemble.adapter.engine_input(X_eval)
        rerouted = worth_rerouting(ensemble, X_engine, groups)
    progress(
        f"scoring {len(groups)} features or groups x {n_repeats} draws on "
        f"{n_rows} rows ({int(rerouted.sum())} with the tree engine)"
    )
    scores = np.empty((len(groups), n_repeats))
    differences = np.empty((len(groups), n_rows))
    if rerouted.any():
        served = np.flatnonzero(rerouted)
        scores[served], differences[served] = engine_replaced_scores(
            estimator,
            ensemble,
            X_eval,
            X_engine,
            y_eval,
            weight_eval,
            [groups[g] for g in served],
            [samplers[g] for g in served],
            permutations,
            uniforms,
            scorer,
            n_jobs,
            progress,
        )
    if not rerouted.all():
        rest = np.flatnonzero(~rerouted)
        scores[rest], losses = generic_replaced_scores(
            estimator,
            X_eval,
            y_eval,
            weight_eval,
            [groups[g] for g in rest],
            [samplers[g] for g in rest],
            permutations,
            uniforms,
            scorer,
            n_jobs,
            verbose,
        )
        differences[rest] = losses - baseline_losses[None, :]
    pvalues = loss_pvalues(differences, weight_eval, take_rows(row_groups, rows))
    progress("done")
    return importance_result(
        baseline - scores,
        labels,
        groups=groups,
        pvalues=pvalues,
        sampler_scores=[np.array([s.score for s in group]) for group in samplers],
        baseline_score=baseline,
        method="conditional_permutation",
        scoring=scoring,
        n_repeats=n_repeats,
        sampler=sampler,
        max_samples=max_samples,
        random_state=seed,
    )
