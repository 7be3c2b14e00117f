"""The seam between model families and the engine: an adapter turns one
fitted model into a :class:`TreeEnsemble`, the only thing the rest of the
engine reads.

The engine's model of an ensemble
---------------------------------
For a row ``x``, the model's raw output (shape ``(n_outputs,)``) is::

    raw(x) = (start(x) + sum over terms t of table_t[leaf_t(x)]) / divisor

added term by term in the order of ``TreeEnsemble.terms``, which must be the
order in which the model's own ``predict`` adds them (bit-for-bit equality
with the model, ties included, depends on it); then the model's link turns
``raw`` into what a scorer reads (probabilities, decision values or
regression values). Every family the engine supports has this form:

- averaged trees (DecisionTree*, RandomForest*, ExtraTrees*, Bagging*):
  ``start = 0``, ``divisor = n_trees`` (or, out of bag, the number of trees
  for which the row is out of bag), tables of class fractions or values;
- gradient boosting (GradientBoosting*, HistGradientBoosting*, XGBoost,
  LightGBM, CatBoost): ``start`` the baseline raw score (the initial
  estimator's, ``base_score``, CatBoost's bias; LightGBM folds its initial
  score in the first trees' leaves), ``divisor = 1``, tables of
  ``learning_rate * leaf value`` (the histogram-based libraries' leaf values
  already include the learning rate), one term per class per iteration with
  ``columns = [k]`` (CatBoost: one term per tree, adding to every output),
  and the link (sigmoid, softmax, exponential, identity) in
  :meth:`ModelAdapter.scorer_outputs`.
- Spark ML (``_spark_ml.py``): the terms add Spark's raw prediction,
  ``start = 0``: class counts or fractions with ``divisor = 1``, normalised
  in the link; leaf values with ``divisor = n_trees`` (regression forests);
  weighted leaf values with ``divisor = 1`` (GBT).

What an adapter provides
------------------------
One subclass of :class:`ModelAdapter` per family, in its own module of this
package, and one line in ``ADAPTERS`` of ``adapters/__init__.py``:

``accepts(estimator)`` (classmethod)
    Whether the family covers this fitted estimator (type checks only).
``ensemble()``
    The :class:`TreeEnsemble`, or None when this particular model is out of
    reach (multi-output classification). Each :class:`TreeTerm` has:

    - ``tree``: the tree's nodes with scikit-learn's ``Tree`` interface:
      arrays ``children_left``, ``children_right`` (-1 at leaves),
      ``feature`` (the tree's input column; negative at leaves),
      ``threshold`` (float64), ``missing_go_to_left`` (uint8), the ints
      ``node_count`` and ``max_depth``, and ``apply(X)`` and
      ``decision_path(X)`` on C-contiguous rows of ``input_dtype``. A split
      sends ``x`` left when ``x <= threshold``, and a missing value where
      ``missing_go_to_left`` says. A family with another rule converts it
      when it builds the arrays: the boosting adapters hand the engine split
      ranks instead of values, which turn each library's comparison
      (float64 or float32, ``<=`` or ``<``) into this one exactly, and flat
      node arrays with a NumPy ``apply``/``decision_path`` (see
      ``_flat_trees.py``). A categorical split has ``category_set >= 0``:
      the set of category codes it sends left, in the tree's
      ``category_words`` (scikit-learn's trees have neither attribute).
    - ``features``: the tree's input columns as columns of X (a Bagging
      estimator's feature subset), or None for all columns in order.
    - ``columns``: the output columns ``table`` adds to, or None for all.
    - ``table``: ``(node_count, n_columns)`` float64, what a row reaching
      each leaf adds.
    - ``thresholds``: :func:`float32_below` of ``tree.threshold``.

    Categorical splits are no interval ``lower < x <= upper``: routing
    records a row on such a split as always moving (``lower = +inf``), as
    it does for a missing value, and the kernels test the row's code
    against the node's set when they re-route it.
``input_dtype``
    The dtype of the engine's X: ``np.float32`` (scikit-learn's trees'
    values, or the boosting adapters' split ranks and category codes, exact
    in float32).
``engine_input(X)``
    X validated against the model, as a C-contiguous ``input_dtype`` array.
``raw_start(X, n_outputs)``
    ``start`` for rows X, ``(n_rows, n_outputs)`` float64 (zeros by
    default).
``averaged``
    Whether ``divisor`` is the number of trees (True) or 1.
``scorer_outputs(raw)``
    ``raw`` (``(n_rows, n_outputs)``) wrapped for a scorer:
    ``StoredClassifierOutputs`` or ``StoredRegressorOutputs`` of
    ``sklearn_fimp._utils._scoring``, through the model's link.

The backend (``_backend.py``) then prepares the ensemble for its kernels
(``TreeEnsemble.prepared``); nothing else in the engine knows the family.
"""

from abc import ABC, abstractmethod
from functools import cached_property
from typing import NamedTuple

import numpy as np
from sklearn.base import is_classifier

from ..._utils._scoring import StoredClassifierOutputs, StoredRegressorOutputs


def float32_below(values):
    """Largest float32 <= each value. For a float32 ``x`` and a float64
    threshold ``t``, ``x <= t`` exactly when ``x <= float32_below(t)``, and
    ``x > t`` exactly when ``x > float32_below(t)``."""
    rounded = values.astype(np.float32)
    too_high = rounded > values
    rounded[too_high] = np.nextafter(rounded[too_high], np.float32(-np.inf))
    return rounded


class TreeTerm(NamedTuple):
    """One tree's contribution to the ensemble's raw output (see the module
    docstring): ``table[leaf]`` is added to the output columns ``columns``
    (None: all, in order) for rows that reach ``leaf``; ``features`` maps
    the tree's inputs to columns of X (None: all columns, in order)."""

    tree: object
    features: np.ndarray | None
    columns: np.ndarray | None
    table: np.ndarray
    #: split thresholds rounded down to float32 (see float32_below)
    thresholds: np.ndarray


class TreeEnsemble(NamedTuple):
    """What the engine reads of a supported model."""

    terms: list
    n_outputs: int
    #: the model's adapter: input, start, link
    adapter: "ModelAdapter"
    #: whether the outputs are class scores (probabilities or decision
    #: values) of a classifier, rather than regression values
    classifier: bool
    #: the backend the ensemble is prepared for, and what it prepared
    #: (see ``_backend.py``); set by ``tree_ensemble``
    backend: object = None
    prepared: object = None

    @property
    def averaged(self):
        """Whether the raw output is the mean of the terms (forests) rather
        than a start plus their sum (boosting)."""
        return self.adapter.averaged

    def raw_start(self, X):
        """``start`` of the rows X (see the module docstring)."""
        return self.adapter.raw_start(X, self.n_outputs)

    @property
    def outputs_are_probabilities(self):
        """Whether the raw outputs are averaged class fractions, which lie
        in [0, 1]."""
        return self.classifier and self.averaged


class ModelAdapter(ABC):
    """Base class of the model adapters (see the module docstring)."""

    #: dtype of X the trees compare
    input_dtype = np.float32
    #: whether the raw output divides the sum of the terms by their number
    averaged = True
    #: whether the engine's unreplaced outputs (the terms added in the
    #: model's order, in float64) are the model's ``predict``'s, up to the
    #: order a multi-threaded predict adds in (the tests: within 1e-12), so
    #: that the baseline score can be computed from them
    exact_outputs = True

    def __init__(self, estimator):
        self.estimator = estimator

    @classmethod
    @abstractmethod
    def accepts(cls, estimator):
        """Whether this family covers the fitted ``estimator``."""

    @abstractmethod
    def ensemble(self):
        """The model's :class:`TreeEnsemble`, or None when it is out of the
        engine's reach."""

    @abstractmethod
    def engine_input(self, X):
        """X validated against the model, C-contiguous, ``input_dtype``."""

    @cached_property
    def estimator_is_classifier(self):
        """``is_classifier`` of the model, read once: the engine wraps
        outputs for a scorer once per task, and scikit-learn's check reads
        the model's tags each time."""
        return is_classifier(self.estimator)

    def raw_start(self, X, n_outputs):
        """What the terms are added to, ``(n_rows, n_outputs)`` float64:
        zeros unless the family has a baseline raw score."""
        return np.zeros((X.shape[0], n_outputs))

    def scorer_outputs(self, raw):
        """Raw outputs ``(n_rows, n_outputs)`` wrapped for a scorer:
        probabilities for a classifier, values for a regressor (one column:
        flattened, as a single-output regressor predicts)."""
        if self.estimator_is_classifier:
            return StoredClassifierOutputs(self.estimator.classes_, proba=raw)
        return StoredRegressorOutputs(raw[:, 0] if raw.shape[1] == 1 else raw)
