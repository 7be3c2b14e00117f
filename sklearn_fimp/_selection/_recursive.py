"""RecursiveImportanceSelector: recursive elimination by held-out importance,
with the number of features chosen by cross-validation."""

import numbers

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone, is_classifier
from sklearn.model_selection import check_cv
from sklearn.utils import check_random_state

from .._importance._groups import resolve_groups
from .._importance._pipeline import for_columns
from .._utils._compat import (
    Interval,
    RealNotInt,
    StrOptions,
    check_sample_weight,
    fit_context,
)
from .._utils._frames import take_columns, take_rows
from .._utils._progress import Progress
from .._utils._random import MAX_SEED
from .._utils._scoring import get_scorer, score
from .._utils._splits import check_held_out_splits, split_params
from .._utils._validation import discard_fit_on_error, explain_input_errors
from ._base import BaseImportanceSelector
from ._measuring._measure import held_out_rows, measure_on_rows, measured_rows

SELECTION_RULES = ("best", "one_se")


def subset_sizes(n_features, step, min_features_to_select):
    """The numbers of features of the elimination path, largest first: all
    of them, then ``step`` fewer each time (a float step: that fraction of
    ``n_features``, at least 1), down to ``min_features_to_select``."""
    if isinstance(step, numbers.Integral):
        n_drop = int(step)
    else:
        n_drop = max(1, int(step * n_features))
    low = min(min_features_to_select, n_features)
    sizes = list(range(n_features, low, -n_drop))
    return np.array(sizes + [low], dtype=np.intp)


def path_seeds(seed, n_paths, n_sizes):
    """Seeds of every elimination path: row ``p`` is path ``p``'s (one per
    split of ``cv``, then the final path on all rows); its column 0 seeds the
    inner held-out split, column ``1 + k`` the importance at step ``k``."""
    return np.random.RandomState(seed).randint(
        MAX_SEED + 1, size=(n_paths, n_sizes + 1)
    )


def choose_size(sizes, scores, rule):
    """Index in ``sizes`` of the chosen subset size.

    ``scores`` has one row per size and one column per split. "best": the
    largest mean score (the fewest features among ties). "one_se": the
    fewest features whose mean score is at least the best mean minus the
    standard error of the best size's scores (their standard deviation,
    ddof=1, over the square root of the number of splits).
    """
    means = scores.mean(axis=1)
    by_size = np.argsort(sizes, kind="stable")  # fewest features first
    best = by_size[np.argmax(means[by_size])]
    if rule == "best":
        return int(best)
    n_splits = scores.shape[1]
    error = scores[best].std(ddof=1) / np.sqrt(n_splits) if n_splits > 1 else 0.0
    within = by_size[means[by_size] >= means[best] - error]
    return int(within[0])


def cv_results(sizes, scores):
    """``cv_results_`` of scores with one row per subset size and one
    column per split: ``n_features``, ``mean_test_score``,
    ``std_test_score`` and ``split{k}_test_score``."""
    return {
        "n_features": np.array(sizes).copy(),
        "mean_test_score": scores.mean(axis=1),
        "std_test_score": scores.std(axis=1),
        **{f"split{k}_test_score": scores[:, k] for k in range(scores.shape[1])},
    }


def elimination_path(
    estimator,
    method,
    X,
    y,
    *,
    train,
    test,
    sizes,
    seeds,
    labels,
    fit_kwargs,
    score_weight,
    scorer,
    options,
):
    """Eliminate features on the rows ``train`` (None: all rows), down the
    subset ``sizes``; score each subset on the rows ``test`` (None: no score).

    At each size the model is fitted and the method measures the current
    features on the rows ``_measure.measured_rows`` gives for them: the
    model's out-of-bag rows, an inner held-out split of ``train`` fixed for
    the whole path (``_measure.held_out_rows``; the model is fitted on the
    rest), the model alone, or the method's own refits on ``train``. The
    rows ``test`` are never measured on. The ``sizes[k] - sizes[k + 1]``
    least important features are then dropped (the lower column position
    first among ties).

    Returns the scores (one per size, empty without ``test``) and the
    features dropped at each step, least important first.
    """
    path_rows = np.arange(X.shape[0]) if train is None else np.asarray(train)
    inner_train, inner_test = held_out_rows(
        method, estimator, y[path_rows], None, seeds[0]
    )[0]
    fit_rows = path_rows if inner_train is None else path_rows[inner_train]
    measure_rows, _ = measured_rows(method, inner_train, inner_test)
    measure_rows = path_rows if measure_rows is None else path_rows[measure_rows]
    X_fit, y_fit = take_rows(X, fit_rows), y[fit_rows]
    fit_params = split_params(fit_kwargs, fit_rows, X.shape[0])
    if test is not None:
        X_test, y_test = take_rows(X, test), y[test]
        test_weight = take_rows(score_weight, test)
    features = np.arange(X.shape[1])
    scores, dropped = [], []
    for k, size in enumerate(sizes):
        # a Pipeline whose ColumnTransformer lists columns, pruned to the
        # features in play
        in_play = np.isin(np.arange(X.shape[1]), features)
        subset_estimator = for_columns(estimator, in_play, labels)
        model = clone(subset_estimator).fit(
            take_columns(X_fit, features), y_fit, **fit_params
        )
        if test is not None:
            scores.append(
                score(
                    scorer, model, take_columns(X_test, features), y_test, test_weight
                )
            )
        if k == len(sizes) - 1:
            break
        step_labels, step_groups = resolve_groups(None, labels[features])
        result = measure_on_rows(
            method,
            model if method.fits_model else subset_estimator,
            X,
            y,
            dict(
                options,
                labels=step_labels,
                groups=step_groups,
                sample_weight=score_weight,
            ),
            rows=measure_rows,
            seed=int(seeds[k + 1]),
            max_samples=options["max_samples"],
            columns=features,
            fit_params=fit_kwargs,
        )
        order = np.argsort(result.importances_mean, kind="stable")
        least = order[: size - sizes[k + 1]]
        dropped.append(features[least])
        features = np.delete(features, least)
    return np.array(scores), dropped


class RecursiveImportanceSelector(BaseImportanceSelector):
    """Recursive feature elimination by importance on rows the model did not
    train on, with the number of features chosen by cross-validation.

    In each training split of ``cv``, the estimator is fitted on the
    features still in play, their importances are measured with one of the
    package's methods, and the ``step`` least important features are
    dropped, until ``min_features_to_select`` remain. Each subset along the
    way is scored on the split's test rows. The importances are measured on
    rows the fitted model did not train on, never on those test rows: the
    out-of-bag rows of the training split for the out-of-bag methods, or an
    inner held-out split of 20% of it (the model is then fitted on the other
    80%) for "permutation" and "shap". The subset size is the one with the
    best mean score over the splits, or with ``selection_rule="one_se"``
    the smallest within one standard error of it. The same elimination is
    then run on all rows down to that size, which gives ``support_`` and
    ``ranking_``, and the estimator is refitted on the selected features.

    It answers "how few features can this model use before its
    cross-validated score drops?", where :class:`ImportanceSelector`
    answers "which features beat noise?". Unlike
    :class:`sklearn.feature_selection.RFECV`, which ranks features by
    ``coef_`` or ``feature_importances_`` (impurity decreases on the
    training rows for trees), the ranking comes from held-out or
    out-of-bag importance, which does not reward features the model used to
    fit noise.

    Parameters
    ----------
    estimator : estimator or None, default=None
        The model: a classifier, regressor or Pipeline (cloned). None: a
        RandomForestClassifier for class labels (strings, booleans, a
        category dtype, or at most 10 distinct whole numbers), a
        RandomForestRegressor otherwise, as for :class:`ImportanceSelector`.
    method : {"auto", "mdi", "oob_mdi", "permutation", "oob_permutation", \
            "conditional_permutation", "drop_column", "shap"}, default="auto"
        The importance that ranks features at each step (see
        :class:`ImportanceSelector`). "auto": "oob_mdi" for bagged trees
        with bootstrap, "oob_permutation" for other bagged models with
        bootstrap, "permutation" otherwise. "mdi" is measured on the
        training rows (the ranking RFECV uses for trees), "drop_column"
        refits on a held-out split of the training rows at every step.
    step : int or float, default=1
        Features dropped at each step (a float in (0, 1): that fraction of
        the number of features, rounded down, at least 1).
    min_features_to_select : int, default=1
        The smallest subset scored.
    cv : int, cross-validation generator or iterable, default=5
        Splits scoring the subsets (an int: (Stratified)KFold, as
        scikit-learn's ``check_cv``). An iterable of splits (a generator
        such as ``KFold(3).split(X, y)``) is read once per fit.
    scoring : str, callable or None, default=None
        Scorer of the subsets on the test rows, and of the permutation
        methods' importance. None: the estimator's ``score``.
    selection_rule : {"best", "one_se"}, default="best"
        "best": the size with the largest mean score (the fewest features
        among ties). "one_se": the fewest features whose mean score is at
        least the best mean minus one standard error of the best size's
        split scores (standard deviation with ddof=1 over the square root of
        the number of splits): a smaller model the data cannot tell apart
        from the best one.
    n_repeats : int, default=5
        Permutations per feature for the permutation methods.
    max_samples : int, float or None, default=None
        Measure "permutation", "oob_permutation" and "shap" on at most this
        many rows (a float: this fraction) of those available at each step.
    n_jobs : int or None, default=None
        Splits of ``cv`` run in parallel (joblib semantics). The results do
        not depend on it.
    verbose : int, default=0
        Progress messages on stderr.
    random_state : int, RandomState instance or None, default=None
        Seed of the inner held-out splits and permutations, also given to
        every ``random_state`` of the estimator left at None, so that the
        selection is reproducible. Every seed is drawn before the splits
        run.

    Attributes
    ----------
    n_features_ : int
        The number of features selected.
    support_ : ndarray of shape (n_features_in_,)
        Mask of the selected features.
    ranking_ : ndarray of shape (n_features_in_,)
        1 for the selected features; the features dropped at the last step
        of the final elimination get 2, those of the step before 3, and so
        on.
    cv_results_ : dict of ndarrays
        ``n_features`` (the subset sizes, largest first), ``mean_test_score``
        and ``std_test_score`` over the splits, and ``split{k}_test_score``
        for each split ``k``.
    estimator_ : estimator
        The estimator fitted on the selected features of all rows.
    method_ : str
        The method used ("auto" resolved).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when X has string column names.

    See Also
    --------
    sklearn.feature_selection.RFECV : The same loop ranked by ``coef_`` or
        ``feature_importances_``.
    ImportanceSelector : Keep the features that beat random probes.
    RecursiveSelectionDisplay : The cross-validated score against the
        number of features.

    Notes
    -----
    Each split fits the estimator once per subset size; for the
    out-of-bag methods that fit is all the work (MDI-oob needs no
    permutations, out-of-bag permutation re-routes only the rows a permuted
    feature changes), so the cost is close to RFECV's. On the package's
    benchmark (``bench/bench_recursive.py``, ``docs/bench_recursive.rst``)
    it is compared with RFECV, probatus' ShapRFECV and the loop of refits
    and :func:`sklearn.inspection.permutation_importance`.

    ``sample_weight`` (and, with metadata routing enabled, any requested
    fit parameter) is passed to the estimator's ``fit`` on every subset and
    weights the scores and the importances. ``groups`` is passed to the
    ``cv`` splitter (GroupKFold and the like).

    Examples
    --------
    >>> from sklearn.datasets import make_friedman1
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from sklearn_fimp import RecursiveImportanceSelector
    >>> X, y = make_friedman1(n_samples=300, n_features=8, random_state=0)
    >>> selector = RecursiveImportanceSelector(
    ...     RandomForestRegressor(n_estimators=30), cv=3, random_state=0
    ... ).fit(X, y)
    >>> selector.support_
    array([ True,  True,  True,  True,  True, False, False, False])
    >>> selector.cv_results_["n_features"]
    array([8, 7, 6, 5, 4, 3, 2, 1])
    """

    # scoring and cv score the subsets whatever the method
    _method_parameters = ("n_repeats", "max_samples")

    _parameter_constraints = {
        **BaseImportanceSelector._parameter_constraints,
        "step": [
            Interval(numbers.Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="neither"),
        ],
        "min_features_to_select": [Interval(numbers.Integral, 1, None, closed="left")],
        "selection_rule": [StrOptions(set(SELECTION_RULES))],
    }

    def __init__(
        self,
        estimator=None,
        *,
        method="auto",
        step=1,
        min_features_to_select=1,
        cv=5,
        scoring=None,
        selection_rule="best",
        n_repeats=5,
        max_samples=None,
        n_jobs=None,
        verbose=0,
        random_state=None,
    ):
        self.estimator = estimator
        self.method = method
        self.step = step
        self.min_features_to_select = min_features_to_select
        self.cv = cv
        self.scoring = scoring
        self.selection_rule = selection_rule
        self.n_repeats = n_repeats
        self.max_samples = max_samples
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    @discard_fit_on_error
    @fit_context(prefer_skip_nested_validation=False)
    @explain_input_errors
    def fit(self, X, y, *, groups=None, **fit_params):
        """Score every subset size by cross-validation, then select.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Training rows (pandas and polars frames are kept as frames).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Target values.
        groups : array-like of shape (n_samples,), default=None
            Group labels for a group splitter in ``cv`` (GroupKFold ...).
        **fit_params : dict
            Parameters of the estimator's ``fit``; ``sample_weight`` also
            weights the scores and the importances. With metadata routing
            enabled, each goes where the estimator and scorer request it.

        Returns
        -------
        self : RecursiveImportanceSelector
            The fitted selector.
        """
        # prepare: validate once, route, draw every seed before the splits
        X, y, feature_names = self._check_X_y(X, y)
        fit_kwargs, score_weight, split_kwargs = self._routed_params(groups, fit_params)
        if score_weight is not None:
            score_weight = check_sample_weight(score_weight, X)
        progress = Progress(type(self).__name__, self.verbose)
        rng = check_random_state(self.random_state)
        model_seed, seed = rng.randint(MAX_SEED + 1, size=2)
        self._warn_inferred_target(y)
        estimator = self._estimator_to_fit(y, model_seed)
        method = self._method_entry(estimator, y, X)
        scorer = get_scorer(estimator, self.scoring)
        sizes = subset_sizes(X.shape[1], self.step, self.min_features_to_select)
        splitter = check_cv(self.cv, y, classifier=is_classifier(estimator))
        splits = list(splitter.split(X, y, **split_kwargs))
        check_held_out_splits(estimator, y, splits, score_weight)
        seeds = path_seeds(seed, len(splits) + 1, len(sizes))
        parallel = self.n_jobs not in (None, 1) and len(splits) > 1
        options = {
            "scoring": self.scoring,
            "n_repeats": self.n_repeats,
            "max_samples": self.max_samples,
            "n_jobs": 1 if parallel else self.n_jobs,
            "centre_target": True,
            "cv": None,
        }
        path = {
            "sizes": sizes,
            "labels": feature_names,
            "fit_kwargs": fit_kwargs,
            "score_weight": score_weight,
            "scorer": scorer,
            "options": options,
        }

        # score every subset size on every split
        progress(
            f"eliminating with {method.name!r} from {X.shape[1]} to "
            f"{sizes[-1]} features in {len(splits)} splits"
        )
        results = Parallel(n_jobs=self.n_jobs if parallel else None)(
            delayed(elimination_path)(
                estimator, method, X, y, train=train, test=test, seeds=s, **path
            )
            for (train, test), s in zip(splits, seeds)
        )
        scores = np.column_stack([split_scores for split_scores, _ in results])
        self.cv_results_ = cv_results(sizes, scores)

        # choose the size, eliminate on all rows down to it, refit
        chosen = choose_size(sizes, scores, self.selection_rule)
        progress(f"chose {sizes[chosen]} features; eliminating on all rows")
        _, dropped = elimination_path(
            estimator,
            method,
            X,
            y,
            train=None,
            test=None,
            seeds=seeds[-1],
            **dict(path, sizes=sizes[: chosen + 1]),
        )
        ranking = np.ones(X.shape[1], dtype=np.intp)
        for rank, features in enumerate(reversed(dropped), start=2):
            ranking[features] = rank
        self.ranking_ = ranking
        self.support_ = ranking == 1
        self.n_features_ = int(self.support_.sum())
        self.method_ = method.name
        progress(f"refitting on the {self.n_features_} selected features")
        self.estimator_ = self._refit_selected(estimator, X, y, fit_kwargs)
        return self
