"""DependenceAnalyzer: sequential elimination of redundant features."""

import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted

from .._importance._dependence import (
    COMMON_PARAMS,
    CONSTANT,
    dependence_matrix,
    measure_features,
    prepare,
)
from .._utils._compat import (
    Interval,
    fit_context,
    validate_data,
)
from .._utils._progress import Progress
from .._utils._validation import discard_fit_on_error, explain_input_errors
from ._base import transform_selected

#: Columns of ``DependenceAnalyzer.elimination_path_``.
PATH_KEYS = ("feature", "index", "dependence", "explained_by", "remeasured")


def _explained_by(row, active, feature):
    """The remaining feature with the largest entry in ``row`` (None when no
    remaining feature has a positive one)."""
    candidates = active.copy()
    candidates[feature] = False
    scores = np.where(candidates & np.isfinite(row), row, -np.inf)
    best = int(np.argmax(scores))
    return best if scores[best] > 0 else None


class DependenceAnalyzer(SelectorMixin, BaseEstimator):
    """Remove redundant features one at a time, by their dependence.

    The dependence of a feature is how well a forest predicts it from all
    the other features, out of bag (see :func:`feature_dependence`). Fitting
    first measures every feature's dependence and the dependence matrix,
    then eliminates sequentially:

    1. among the remaining features, drop the one with the highest
       dependence, if it is above ``threshold``;
    2. re-measure (refit) the remaining features above ``threshold`` whose
       models relied on the dropped one: their entry for it in the
       dependence matrix (how much their dependence dropped when it was
       permuted) is above ``tol``. The other features' dependences cannot
       have changed by more than about ``tol``, and features at or below
       ``threshold`` cannot rise above it by losing an input, so neither is
       refitted;
    3. repeat until no remaining feature is above ``threshold`` (or one
       feature remains).

    Dropping every feature above the threshold at once would be wrong: two
    copies of a column both have dependence near 1, and dropping both loses
    their information. Sequentially, the first copy is dropped and the
    second, re-measured without it, is kept.

    Parameters
    ----------
    estimator : estimator, dict or None, default=None
        The models that predict each feature, as in
        :func:`feature_dependence`. None: its random forests (100 trees,
        each grown on a bootstrap sample of 30% of the rows).
    threshold : float in [0, 1], default=0.95
        Features whose dependence is above it are redundant. The default
        drops a feature only when the others explain more than 95% of its
        variance (or of its classification error beyond chance).
    max_samples : int, float or None, default=5000
        Rows the dependence models are trained and scored on, as in
        :func:`feature_dependence`.
    categorical_threshold : int, default=10
        Numeric features with at most this many distinct values are
        predicted by the classifier.
    n_repeats : int, default=1
        Permutations per input feature in the dependence matrix.
    tol : float, default=0.01
        A remaining feature is re-measured after a drop when its dependence
        fell by more than ``tol`` with the dropped feature permuted.
    n_jobs : int or None, default=None
        Features measured in parallel (joblib semantics;
        ``joblib.parallel_config(backend="dask")`` fits them on a Dask
        cluster, with the same results).
    verbose : int, default=0
        Progress messages on stderr: a line per elimination step, and
        joblib's progress of the parallel fits.
    random_state : int, RandomState instance or None, default=None
        Seeds the row sample, the forests and the permutations; each feature
        keeps its own seeds whenever it is re-measured, so results are the
        same for every ``n_jobs`` and joblib backend.

    Attributes
    ----------
    dependence_ : ndarray of shape (n_features_in_,)
        Dependence of each feature on all the others, before elimination.
    dependence_matrix_ : ndarray of shape (n_features_in_, n_features_in_)
        ``dependence_matrix_[i, k]``: how much the dependence of feature
        ``i`` drops when feature ``k`` is permuted (NaN on the diagonal and
        for constant features), before elimination.
    target_kind_ : ndarray of shape (n_features_in_,)
        "regression", "classification" or "constant": how each feature is
        predicted.
    elimination_path_ : dict of ndarray
        One entry per dropped feature, in the order they were dropped
        (``pandas.DataFrame(elimination_path_)`` shows it as a table):
        ``"feature"`` (name), ``"index"`` (column position),
        ``"dependence"`` (its dependence on the features remaining when it
        was dropped), ``"explained_by"`` (the remaining feature whose
        permutation lowered that dependence most; None for a constant
        feature) and ``"remeasured"`` (the features refitted after the
        drop).
    support_ : ndarray of shape (n_features_in_,)
        Mask of the kept features.
    n_fits_ : int
        Number of models fitted (the first pass fits one per non-constant
        feature).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X has string column names.

    See Also
    --------
    feature_dependence : The dependences and the matrix alone.
    feature_groups : Groups of collinear features by rank correlation.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_fimp import DependenceAnalyzer
    >>> rng = np.random.RandomState(0)
    >>> a, b = rng.normal(size=(2, 300))
    >>> X = np.column_stack([a, b, a, a + 0.01 * rng.normal(size=300)])
    >>> analyzer = DependenceAnalyzer(random_state=0).fit(X)
    >>> int(analyzer.support_.sum())  # b and one copy of a
    2
    >>> bool(analyzer.support_[1])
    True
    """

    _parameter_constraints = {
        "threshold": [Interval(numbers.Real, 0, 1, closed="both")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        **COMMON_PARAMS,
    }

    def __init__(
        self,
        estimator=None,
        *,
        threshold=0.95,
        max_samples=5000,
        categorical_threshold=10,
        n_repeats=1,
        tol=0.01,
        n_jobs=None,
        verbose=0,
        random_state=None,
    ):
        self.estimator = estimator
        self.threshold = threshold
        self.max_samples = max_samples
        self.categorical_threshold = categorical_threshold
        self.n_repeats = n_repeats
        self.tol = tol
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    @discard_fit_on_error
    @fit_context(prefer_skip_nested_validation=True)
    @explain_input_errors
    def fit(self, X, y=None):
        """Measure the dependences and eliminate redundant features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The features (not modified; strings and categorical columns are
            encoded internally).
        y : None
            Ignored.

        Returns
        -------
        self : DependenceAnalyzer
        """
        state = prepare(
            X,
            self.estimator,
            self.max_samples,
            self.categorical_threshold,
            self.random_state,
        )
        validate_data(self, X, skip_check_array=True)
        values, kinds = state.values, state.kinds
        n_features = values.shape[1]
        active = np.ones(n_features, dtype=bool)
        progress = Progress(type(self).__name__, self.verbose)

        def measure(features):
            return measure_features(
                values,
                features,
                lambda j: np.flatnonzero(active & (np.arange(n_features) != j)),
                kinds,
                state.estimators,
                state.seeds,
                n_jobs=self.n_jobs,
                n_repeats=self.n_repeats,
                verbose=self.verbose,
            )

        progress(
            f"fitting a model of each of {n_features} features on "
            f"{values.shape[0]} rows"
        )
        measurements = measure(np.arange(n_features))
        dependence = np.array([m.dependence for m in measurements])
        matrix = dependence_matrix(measurements, n_features)
        matrix[kinds == CONSTANT] = np.nan
        self.dependence_ = dependence
        self.dependence_matrix_ = matrix
        self.target_kind_ = kinds
        n_fits = sum(m.fitted for m in measurements)

        self.elimination_path_, n_refits = self._eliminate(
            state, measure, active, progress
        )
        self.support_ = active
        self.n_fits_ = int(n_fits + n_refits)
        return self

    def _eliminate(self, state, measure, active, progress):
        """Drop, one at a time, the active feature most dependent on the
        others above ``threshold`` (``active``, a mask changed in place),
        then measure again those that relied on it by more than ``tol``
        (``measure(features)``): ``(elimination_path_, fits)``, the fits of
        the measurements again."""
        current = self.dependence_.copy()
        current_matrix = self.dependence_matrix_.copy()
        n_fits = 0
        path = {key: [] for key in PATH_KEYS}
        while active.sum() > 1:
            candidates = active & (current > self.threshold)
            if not candidates.any():
                break
            dropped = int(np.argmax(np.where(candidates, current, -np.inf)))
            explained_by = _explained_by(current_matrix[dropped], active, dropped)
            active[dropped] = False
            relied = current_matrix[:, dropped]
            stale = np.flatnonzero(
                active
                & (current > self.threshold)
                & (np.nan_to_num(relied, nan=-np.inf) > self.tol)
            )
            for m in measure(stale):
                current[m.feature] = m.dependence
                current_matrix[m.feature] = np.nan
                current_matrix[m.feature, m.inputs] = m.importances
                n_fits += m.fitted
            path["feature"].append(state.names[dropped])
            path["index"].append(dropped)
            path["dependence"].append(float(current[dropped]))
            path["explained_by"].append(
                None if explained_by is None else state.names[explained_by]
            )
            path["remeasured"].append([state.names[j] for j in stale])
            progress(
                f"dropped {state.names[dropped]} (dependence "
                f"{current[dropped]:.3f}), re-measured {len(stale)}; "
                f"{int(active.sum())} features remain"
            )

        elimination_path = {
            "feature": np.asarray(path["feature"], dtype=object),
            "index": np.asarray(path["index"], dtype=np.intp),
            "dependence": np.asarray(path["dependence"], dtype=np.float64),
            "explained_by": np.asarray(path["explained_by"], dtype=object),
            "remeasured": _object_array(path["remeasured"]),
        }
        return elimination_path, n_fits

    def _get_support_mask(self):
        check_is_fitted(self)
        return self.support_

    def transform(self, X):
        """Reduce X to the kept features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)

        Returns
        -------
        X_kept : ndarray or DataFrame of shape (n_samples, n_kept_features)
            Of the type ``set_output`` asks for; a pandas or polars frame
            asked to return its own type keeps its column dtypes.
        """
        return transform_selected(self, X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.target_tags.required = False
        return tags


def _object_array(items):
    """A 1-D object array of lists (np.asarray would make it 2-D)."""
    array = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        array[i] = item
    return array
