"""Every use of a private scikit-learn name lives in this module.

scikit-learn does not promise stability for names that start with an
underscore. Keeping them in one place means an upgrade that moves one breaks
this file only, and the rest of the package reads public API.
"""

import inspect
import warnings

import numpy as np
import scipy.sparse
import sklearn
from sklearn.base import _fit_context
from sklearn.feature_selection._base import _get_feature_importances
from sklearn.linear_model import SGDRegressor
from sklearn.linear_model._base import LinearClassifierMixin, LinearModel
from sklearn.metrics import brier_score_loss as _brier_score_loss
from sklearn.metrics._scorer import _MultimetricScorer, _PassthroughScorer, _Scorer
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    validate_params,
)
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.metadata_routing import _routing_enabled
from sklearn.utils.validation import (
    _check_feature_names,
    _check_n_features,
    _check_sample_weight,
    _get_feature_names,
)
from sklearn.utils.validation import validate_data as _validate_data

__all__ = [
    "column_transformer_inputs",
    "SKLEARN_VERSION",
    "MISSING_VALUES_ROUTED_AS_FITTED",
    "HasMethods",
    "LINEAR_MODELS",
    "Interval",
    "RealNotInt",
    "StrOptions",
    "add_note",
    "brier_score_loss",
    "check_columns_as_fitted",
    "check_sample_weight",
    "checked_scorer",
    "decision_path",
    "fit_context",
    "gradient_boosting_init",
    "gradient_boosting_proba",
    "hist_gradient_boosting_input",
    "hist_gradient_boosting_trees",
    "model_importances",
    "n_training_rows",
    "output_config",
    "routing_enabled",
    "scorer_reads_labels_only",
    "safe_indexing",
    "transform_checking_names",
    "validate_data",
    "validate_params",
]

safe_indexing = _safe_indexing

#: Models whose raw output (decision function or prediction) is their
#: inputs times ``coef_`` plus ``intercept_`` (scikit-learn's private
#: bases of its linear models; SGDRegressor has none of them).
LINEAR_MODELS = (LinearModel, LinearClassifierMixin, SGDRegressor)

#: scikit-learn's (major, minor) version.
SKLEARN_VERSION = tuple(int(part) for part in sklearn.__version__.split(".")[:2])

# ``allow_all_zero_weights`` was added in scikit-learn 1.9, which rejects
# all-zero weights by default; earlier releases accept them silently.
_ALLOWS_ZERO_WEIGHTS = (
    "allow_all_zero_weights" in inspect.signature(_check_sample_weight).parameters
)

# Before scikit-learn 1.8, ``decision_path`` ignores the node's missing-value
# rule that ``apply`` and ``predict`` follow.
_DECISION_PATH_FOLLOWS_MISSING_RULE = SKLEARN_VERSION >= (1, 8)

#: Whether a bagged tree fitted on rows with missing values sends its in-bag
#: rows down the paths ``apply`` gives them. Before scikit-learn 1.8 it does
#: not always (forests fitted on data with NaN: a few in-bag rows per tree
#: reach other leaves at prediction than in the fit), so node values cannot
#: be matched to the rows that reach a node.
MISSING_VALUES_ROUTED_AS_FITTED = SKLEARN_VERSION >= (1, 8)


# scikit-learn 1.7 scores the probabilities of more than two classes by the
# Brier score (the squared errors summed over the classes, averaged over the
# rows); earlier releases score two classes only.
_BRIER_SCORES_CLASSES = SKLEARN_VERSION >= (1, 7)


def brier_score_loss(
    y_true, y_proba, *, sample_weight=None, pos_label=None, labels=None
):
    """scikit-learn's ``brier_score_loss``: of the positive class's
    probabilities (1d, ``labels`` unread), or of the probabilities of the
    classes ``labels`` (2d, one column each), whose squared errors summed
    over the classes are averaged over the rows, as scikit-learn >= 1.7
    computes it; this module computes the same where scikit-learn is
    older."""
    y_proba = np.asarray(y_proba)
    if y_proba.ndim == 1:
        return _brier_score_loss(
            y_true, y_proba, sample_weight=sample_weight, pos_label=pos_label
        )
    if _BRIER_SCORES_CLASSES:
        return _brier_score_loss(
            y_true, y_proba, sample_weight=sample_weight, labels=labels
        )
    if labels is None:
        labels = np.unique(y_true)
    truth = np.asarray(y_true)[:, None] == np.asarray(labels)[None, :]
    errors = np.sum((y_proba - truth) ** 2, axis=1)
    return float(np.average(errors, weights=sample_weight))


def add_note(exc, note):
    """``exc.add_note(note)`` (Python >= 3.11); on Python 3.10, append it to
    ``exc.__notes__`` as PEP 678 specifies (tools that read notes, such as
    pytest, find it there; 3.10's traceback does not print notes)."""
    if hasattr(exc, "add_note"):
        exc.add_note(note)
        return
    notes = getattr(exc, "__notes__", None)
    if not isinstance(notes, list):
        notes = []
        exc.__notes__ = notes
    notes.append(note)


def decision_path(tree, X, *, check_input=True):
    """``tree.decision_path(X)`` that follows the nodes' missing-value rule
    on every scikit-learn version (``tree``: a fitted decision tree, or its
    ``tree_``).

    Returns a CSR indicator matrix of shape (n_rows, node_count) whose row
    ``i`` holds the nodes of row ``i``'s path, in increasing order (node ids
    grow along a path). Before scikit-learn 1.8 the path is rebuilt from the
    leaf ``tree.apply`` reaches (which follows the rule) and the chain of its
    ancestors.
    """
    low_level = not hasattr(tree, "tree_")  # scikit-learn's Tree itself
    options = {} if low_level else {"check_input": check_input}
    if _DECISION_PATH_FOLLOWS_MISSING_RULE:
        return tree.decision_path(X, **options)
    tree_ = tree if low_level else tree.tree_
    leaves = tree.apply(X, **options)
    parent = np.full(tree_.node_count, -1, dtype=np.intp)
    internal = np.flatnonzero(tree_.children_left >= 0)
    parent[tree_.children_left[internal]] = internal
    parent[tree_.children_right[internal]] = internal
    unique_leaves, row_leaf = np.unique(leaves, return_inverse=True)
    chains = []
    for leaf in unique_leaves:
        chain = [leaf]
        while parent[chain[-1]] >= 0:
            chain.append(parent[chain[-1]])
        chains.append(np.asarray(chain[::-1], dtype=np.intp))
    lengths = np.array([len(chain) for chain in chains], dtype=np.intp)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    flat = np.concatenate(chains)
    row_lengths = lengths[row_leaf]
    indptr = np.concatenate([[0], np.cumsum(row_lengths)]).astype(np.intp)
    # entry k of row i is flat[starts[leaf of i] + k]
    offsets = np.arange(indptr[-1]) - np.repeat(indptr[:-1], row_lengths)
    indices = flat[np.repeat(starts[row_leaf], row_lengths) + offsets]
    data = np.ones(len(indices), dtype=np.int64)
    return scipy.sparse.csr_matrix(
        (data, indices, indptr), shape=(len(leaves), tree_.node_count)
    )


#: ``@fit_context(prefer_skip_nested_validation=...)`` on ``fit``: validates
#: ``_parameter_constraints`` and runs fit in scikit-learn's config context.
fit_context = _fit_context

#: Whether ``sklearn.set_config(enable_metadata_routing=True)`` is in force.
routing_enabled = _routing_enabled


def output_config(method, estimator):
    """The container ``estimator.set_output`` (or the global config) asks
    ``method`` to return: "default", "pandas" or "polars"."""
    return _get_output_config(method, estimator)["dense"]


def check_sample_weight(sample_weight, X):
    """Validate ``sample_weight`` (non-negative, one per row of ``X``, not
    all zero); errors name the offending row."""
    extra = {"allow_all_zero_weights": True} if _ALLOWS_ZERO_WEIGHTS else {}
    sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64, **extra)
    negative = np.flatnonzero(sample_weight < 0)
    if len(negative):
        row = int(negative[0])
        raise ValueError(
            f"sample_weight has {len(negative)} negative value(s), e.g. "
            f"{float(sample_weight[row])} at row {row}; weights must be non-negative. "
            "Pass weights >= 0 (a weight of 0 leaves the row out)."
        )
    if not np.any(sample_weight):
        raise ValueError(
            "sample_weight is 0 for every row, which leaves nothing to fit or "
            "score; give at least one row a positive weight."
        )
    return sample_weight


def model_importances(estimator, getter):
    """A fitted model's own importance of each input column, as
    SelectFromModel reads it: ``getter`` "auto" (``coef_`` or
    ``feature_importances_``), an attribute path ("named_steps.ridge.coef_")
    or a callable; a coefficient matrix (one row per class or output) gives
    the L1 norm of each column."""
    return np.asarray(
        _get_feature_importances(estimator, getter, transform_func="norm", norm_order=1)
    )


def n_training_rows(ensemble):
    """Number of rows a fitted forest or bagging ensemble was trained on.

    ``estimators_samples_`` indexes into the training rows; scikit-learn keeps
    their count in the private ``_n_samples``.
    """
    return getattr(ensemble, "_n_samples", None)


def hist_gradient_boosting_trees(estimator):
    """Yield ``(nodes, original_feature_index)`` for each tree of a fitted HGB.

    ``nodes`` is the structured node array of one tree (fields ``feature_idx``,
    ``gain``, ``is_leaf`` ...). When the model encoded categorical features
    itself, its trees index the columns of an internal ColumnTransformer whose
    output puts the categorical columns first; ``original_feature_index`` maps
    those positions back to the columns the user passed.
    """
    column_map = np.arange(estimator.n_features_in_)
    preprocessor = getattr(estimator, "_preprocessor", None)
    if preprocessor is not None:
        positions = []
        for _, transformer, columns in preprocessor.transformers_:
            if isinstance(transformer, str) and transformer == "drop":
                continue
            if isinstance(columns, slice):
                columns = np.arange(estimator.n_features_in_)[columns]
            columns = np.asarray(columns)
            if columns.dtype == bool:
                columns = np.flatnonzero(columns)
            positions.append(columns)
        column_map = np.concatenate(positions).astype(np.intp)
    for iteration in estimator._predictors:
        for predictor in iteration:
            yield predictor.nodes, column_map


def hist_gradient_boosting_input(estimator, X):
    """X as a fitted HGB's predictors read it (float64, missing values kept):
    validated, and its categorical columns encoded, as the model's own
    ``predict`` does; the columns are in the order its trees index (see
    :func:`hist_gradient_boosting_trees`)."""
    return estimator._preprocess_X(X, reset=False)


def gradient_boosting_proba(estimator, decision):
    """Class probabilities of a GradientBoostingClassifier from its decision
    values, through the model's own loss (as its ``predict_proba`` does)."""
    return estimator._loss.predict_proba(decision)


def gradient_boosting_init(estimator, X):
    """Raw predictions of a GradientBoosting* model's initial estimator, of
    shape (n_rows, n_columns): what its stages are added to."""
    return estimator._raw_predict_init(X)


def scorer_reads_labels_only(scorer):
    """Whether a scorer looks at predicted labels only (accuracy, F1 ...),
    not at probabilities or decision values: scikit-learn's scorer objects
    record the response method they call (a multi-metric one reads labels
    only when each of its scorers does). ``scoring=None`` gives the
    estimator's ``score``; our stand-in classifiers score accuracy."""
    if isinstance(scorer, _PassthroughScorer):
        return True
    # several metrics (a list or dict of scorers): labels only if each is
    inner = getattr(scorer, "scorer", None)
    if isinstance(inner, _MultimetricScorer):
        return all(scorer_reads_labels_only(s) for s in inner._scorers.values())
    return getattr(scorer, "_response_method", None) == "predict"


class _CheckedScorer(_Scorer):
    """A scorer of ``make_scorer`` that first calls ``self._check(estimator,
    y_true)``, which raises or returns keyword arguments of the score
    function (``labels=``)."""

    def _score(self, method_caller, estimator, X, y_true, **kwargs):
        extra = self._check(estimator, y_true)
        return super()._score(method_caller, estimator, X, y_true, **extra, **kwargs)


def checked_scorer(scorer, check, score_func=None):
    """``scorer`` (one of scikit-learn's named scorers) calling
    ``check(estimator, y_true)`` before it scores: the check raises, or
    returns keyword arguments of the score function, which ``score_func``
    replaces where given. Any other scorer is returned as it is."""
    if type(scorer) is not _Scorer:
        return scorer
    checked = _CheckedScorer.__new__(_CheckedScorer)
    checked.__dict__.update(scorer.__dict__)
    checked._check = check
    if score_func is not None:
        checked._score_func = score_func
    return checked


def _polars_names_unread(X):
    """A polars frame whose column names scikit-learn does not read: before
    scikit-learn 1.9 names come through the dataframe interchange protocol,
    which polars 2 dropped."""
    return (
        type(X).__module__.partition(".")[0] == "polars"
        and hasattr(X, "columns")
        and _get_feature_names(X) is None
        and all(isinstance(name, str) for name in X.columns)
    )


def _check_names_as_in_fit(estimator, names):
    """scikit-learn's check that X's feature names are those seen in fit, in
    the same order (for the polars frames it cannot read)."""
    fitted = getattr(estimator, "feature_names_in_", None)
    if fitted is None or (
        len(fitted) == len(names) and np.all(np.asarray(fitted) == names)
    ):
        return
    message = "The feature names should match those that were passed during fit.\n"
    unseen = [name for name in names if name not in set(fitted)]
    missing = [name for name in fitted if name not in set(names)]
    if not unseen and not missing:
        message += "Feature names must be in the same order as they were in fit.\n"
    if unseen:
        message += "Feature names unseen at fit time:\n"
        message += "".join(f"- {name}\n" for name in unseen)
    if missing:
        message += "Feature names seen at fit time, yet now missing:\n"
        message += "".join(f"- {name}\n" for name in missing)
    raise ValueError(message)


def check_columns_as_fitted(estimator, X):
    """scikit-learn's check of X's columns against a fitted ``estimator``,
    as its ``predict`` makes it: the same feature names in the same order
    (a warning when only one of them has names) and ``n_features_in_``
    columns. Raises scikit-learn's ValueError; X is not converted."""
    if _polars_names_unread(X):
        _check_names_as_in_fit(estimator, np.asarray(X.columns, dtype=object))
    else:
        _check_feature_names(estimator, X, reset=False)
    _check_n_features(estimator, X, reset=False)


def validate_data(estimator, X, **kwargs):
    """scikit-learn's ``validate_data``, which also records and checks the
    column names of polars >= 2 frames on scikit-learn < 1.9."""
    if not _polars_names_unread(X):
        return _validate_data(estimator, X, **kwargs)
    names = np.asarray(X.columns, dtype=object)
    reset = kwargs.get("reset", True)
    if not reset:
        _check_names_as_in_fit(estimator, names)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="X does not have valid feature")
        checked = _validate_data(estimator, X, **kwargs)
    if reset:
        estimator.feature_names_in_ = names
    return checked


def column_transformer_inputs(column_transformer):
    """The input column positions of each transformer of a fitted
    ColumnTransformer, remainder included (name -> positions)."""
    return {
        name: list(columns)
        for name, columns in column_transformer._transformer_to_input_indices.items()
    }


def transform_checking_names(estimator, X, transform):
    """``transform(X)`` (a selector's ``SelectorMixin.transform``), with the
    column names of a polars >= 2 frame checked against fit on scikit-learn
    < 1.9, which cannot read them."""
    if not _polars_names_unread(X):
        return transform(X)
    validate_data(estimator, X, skip_check_array=True, reset=False)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="X does not have valid feature")
        return transform(X)
