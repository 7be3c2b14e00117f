"""Permutation importance of a fitted linear model, alone or ending a
Pipeline, without predicting every row for each permutation.

A linear model's raw output (the decision function of a classifier, the
prediction of a regressor) is ``Z @ coef.T + intercept`` on its inputs
``Z`` (the Pipeline's transformed rows, or X). When a group of original
columns feeds the inputs ``block``, permuting it changes the output of
each row by ``c_new - c``, where ``c = Z[:, block] @ coef[:, block].T`` is
the block's contribution: ``c[permutation]`` when the block depends on the
group alone (its rows move together), else the contribution of the block's
values in ``T(X with the group permuted)`` (see :mod:`._pipeline` for which
inputs each column feeds). Each permutation costs a few operations per row
instead of a prediction of every row through the Pipeline.

The permuted outputs go through the model's own link: a copy of the model
whose coefficients are the identity and whose intercept is 0
(:func:`_identity_link`) turns raw outputs into its probabilities, labels
and decision values with its own code (binary or multinomial, one-vs-rest
or softmax), since ``raw @ I + 0`` is ``raw`` exactly.

The outputs equal those of the model's ``predict`` on the permuted rows to
rounding (the sum is regrouped); where that can matter, rows within
rounding of a tie (two classes of a row, or two rows, for a scorer that
ranks rows), the rows are recomputed by the model itself on their permuted
inputs (:func:`~.._engine._ties.rows_near_ties`), so that labels and ranks
are the model's.
"""

import copy

import numpy as np
import scipy.sparse
from sklearn.base import is_classifier
from sklearn.pipeline import Pipeline

from .._engine._ties import rows_near_ties
from .._utils._compat import LINEAR_MODELS, scorer_reads_labels_only
from .._utils._frames import assign_permuted, writable_copy
from .._utils._scoring import (
    DirectScore,
    StoredClassifierOutputs,
    StoredRegressorOutputs,
    score,
    score_table,
)
from ._pipeline import fed_blocks, input_sources

#: A sparse model input (a wide one-hot encoding) is made dense up to this
#: many bytes; beyond, the permuted rows are predicted, as sparse rows.
DENSE_BYTES = 256 * 2**20

#: DirectScore kinds whose formula reads what this module stores (accuracy
#: reads labels, which the model's link gives: it goes through the scorer).
_DIRECT_KINDS = ("binary_auc", "binary_auc_proba", "ovr_auc")
_DIRECT_ADDITIVE = ("neg_log_loss", "neg_brier_score", "r2", "neg_mean_squared_error")


def linear_inputs(estimator, X, groups):
    """:class:`LinearInputs` of a fitted linear model (scikit-learn's linear
    models and linear classifiers), alone or ending a Pipeline, on the rows
    X; None for any other model, or when the model's outputs are not those
    of its coefficients (checked on a few rows)."""
    preprocessing, model = None, estimator
    if isinstance(estimator, Pipeline):
        model = estimator.steps[-1][1]
        if len(estimator.steps) > 1:
            preprocessing = estimator[:-1]
    if not isinstance(model, LINEAR_MODELS) or not hasattr(model, "coef_"):
        return None
    if not _predicts_as_scikit_learn(model):
        return None
    coef = model.coef_
    if scipy.sparse.issparse(coef) or np.ndim(coef) not in (1, 2):
        return None
    inputs = LinearInputs(model, preprocessing, X, groups)
    return inputs if inputs.linear else None


#: The methods the identity link answers with the model's own code.
_PREDICTING = ("predict", "predict_proba", "predict_log_proba", "decision_function")


def _predicts_as_scikit_learn(model):
    """Whether each predicting method of the model is scikit-learn's own: a
    subclass that overrides one (a calibration, a count of calls) is
    predicted, since its link may read more than the raw outputs."""
    for name in _PREDICTING:
        method = getattr(type(model), name, None)
        module = getattr(method, "__module__", None) or ""
        if method is not None and not module.startswith("sklearn."):
            return False
    return True


def _raw(model, Z):
    """The model's raw outputs on its inputs Z, shape (n_rows, n_outputs)."""
    raw = model.decision_function(Z) if is_classifier(model) else model.predict(Z)
    raw = np.asarray(raw, dtype=np.float64)
    return raw.reshape(len(raw), -1)


def _identity_link(model, n_outputs):
    """A copy of the fitted ``model`` whose raw output is its input (an
    identity coefficient matrix, a zero intercept, ``n_outputs`` inputs
    without names): its ``predict``, ``predict_proba`` and
    ``decision_function`` of raw outputs are the model's of the rows that
    gave them."""
    link = copy.copy(model)
    link.coef_ = np.ones(1) if np.ndim(model.coef_) == 1 else np.eye(n_outputs)
    link.intercept_ = np.zeros(n_outputs) if np.ndim(model.intercept_) else 0.0
    link.n_features_in_ = n_outputs
    link.__dict__.pop("feature_names_in_", None)
    return link


def _without_names(model):
    """The model reading unnamed inputs (its names checked already)."""
    if not hasattr(model, "feature_names_in_"):
        return model
    bare = copy.copy(model)
    bare.__dict__.pop("feature_names_in_", None)
    return bare


class LinearInputs:
    """A fitted linear model's inputs on some rows, its raw outputs there,
    and how each group of original columns reaches them.

    Parameters
    ----------
    model : estimator
        The fitted linear model.
    preprocessing : Pipeline or None
        The fitted steps before it, or None.
    X : array-like or DataFrame
        The rows, as the model (or the Pipeline) takes them.
    groups : list of ndarray
        Original column positions of each group.
    """

    def __init__(self, model, preprocessing, X, groups):
        self.model = model
        self.preprocessing = preprocessing
        self.X = X
        transformed = X if preprocessing is None else preprocessing.transform(X)
        self.linear = not (
            scipy.sparse.issparse(transformed)
            and 8 * np.prod(transformed.shape) > DENSE_BYTES
        )
        if not self.linear:
            # a wide sparse encoding: predicting keeps it sparse
            return
        self.decision = _raw(model, transformed)
        self.inputs = self._dense(transformed)
        n_inputs = self.inputs.shape[1]
        sources = (
            [frozenset([k]) for k in range(n_inputs)]
            if preprocessing is None
            else input_sources(preprocessing, X.shape[1])
        )
        if sources is None or len(sources) != n_inputs:
            # the outputs could not be counted: every input from every column
            sources = [frozenset(range(X.shape[1]))] * n_inputs
        self.blocks, self.replaced = fed_blocks(sources, groups)
        self.coef = np.atleast_2d(np.asarray(model.coef_, dtype=np.float64))
        self.classifier = is_classifier(model)
        self.link = _identity_link(model, self.decision.shape[1])
        self.bare = _without_names(model)
        self.linear = self._is_linear()

    @staticmethod
    def _dense(transformed):
        if scipy.sparse.issparse(transformed):
            transformed = transformed.toarray()
        return np.ascontiguousarray(np.asarray(transformed, dtype=np.float64))

    def _is_linear(self):
        """Whether the raw outputs are the inputs times the coefficients
        plus the intercept (to rounding), and the link gives back raw
        outputs exactly, on a few rows: a model that overrides its
        prediction is measured by predicting instead."""
        if self.coef.shape != (self.decision.shape[1], self.inputs.shape[1]):
            return False
        if not np.all(np.isfinite(self.inputs)):
            return False
        rows = np.linspace(0, len(self.inputs) - 1, min(len(self.inputs), 8))
        rows = np.unique(rows.astype(int))
        expected = self.inputs[rows] @ self.coef.T + self.model.intercept_
        scale = 1.0 + np.abs(expected)
        if not np.all(np.abs(self.decision[rows] - expected) <= 1e-8 * scale):
            return False
        return np.array_equal(_raw(self.link, self.decision[rows]), self.decision[rows])

    def feeds_model(self):
        """Whether each group feeds any model input."""
        return np.array([len(block) > 0 for block in self.blocks], dtype=bool)

    def worth_rerouting(self, selected):
        """Every group: a permutation costs a few operations per row."""
        return np.ones(len(selected), dtype=bool)

    def paths(self, rerouted):
        """How each group was measured (as
        :meth:`~._pipeline.PipelineInputs.paths` says), or None for a model
        without steps before it."""
        if self.preprocessing is None:
            return None
        out = []
        for block, mixed in zip(self.blocks, self.replaced, strict=True):
            if len(block) == 0:
                out.append("unused")
            else:
                out.append("transformed" if mixed else "block")
        return np.asarray(out, dtype=object)

    def _new_block(self, columns, block, mixed, permutation):
        """The block's inputs on every row with the group permuted."""
        if not mixed:
            return self.inputs[np.asarray(permutation)][:, block]
        X_work = assign_permuted(writable_copy(self.X), self.X, columns, permutation)
        transformed = self.preprocessing.transform(X_work)
        return self._dense(transformed)[:, block]

    def _checks(self, scorer, direct):
        """Which ties the scorer reads: None (a score of values, no tie
        matters), "labels" (ties of a row's classes) or "ranks" (also ties
        between rows)."""
        if not self.classifier:
            return None
        # a score of probabilities or values: no tie changes it
        if direct is not None and direct.kind == "additive":
            return None
        if scorer_reads_labels_only(scorer):
            return "labels"
        return "ranks"

    def _repair(self, raw, candidates, checks, reference, block, new_block):
        """Recompute, by the model, the rows of ``raw`` (permuted raw
        outputs) within rounding of a tie among ``candidates``."""
        if checks is None:
            return
        ties = rows_near_ties(raw, candidates, reference)
        if not len(ties):
            return
        Z = self.inputs[ties].copy()
        Z[:, block] = new_block[ties]
        raw[ties] = _raw(self.bare, Z)

    def _stored(self, raw, direct):
        """What a :class:`DirectScore` reads of raw outputs."""
        if not self.classifier:
            return StoredRegressorOutputs(raw[:, 0] if raw.shape[1] == 1 else raw)
        proba = None
        if hasattr(self.link, "predict_proba") and direct.kind != "binary_auc":
            proba = self.link.predict_proba(raw)
        decision = raw[:, 0] if raw.shape[1] == 1 else raw
        return StoredClassifierOutputs(
            self.model.classes_, proba=proba, decision=decision
        )

    def _direct(self, scoring, y, sample_weight):
        if scoring is not None and not isinstance(scoring, str):
            return None
        direct = DirectScore.for_scoring(self.model, scoring, y, sample_weight)
        if direct is None:
            return None
        if direct.kind == "additive":
            return direct if direct.additive.kind in _DIRECT_ADDITIVE else None
        return direct if direct.kind in _DIRECT_KINDS else None

    def _score_of(self, scorer, direct, y, sample_weight):
        def score_of(raw):
            if direct is not None:
                value = direct(self._stored(raw, direct))
                if value is not None:
                    return value
            return score(scorer, self.link, raw, y, sample_weight)

        return score_of

    def permuted_scores(
        self,
        groups,
        selected,
        y,
        sample_weight,
        permutations,
        scorer,
        n_jobs,
        scoring,
        progress,
        baseline=False,
    ):
        """Scores of the model with each group ``selected`` (positions in
        ``groups``, the original columns of each) permuted by each
        permutation: shape (len(selected), n_permutations); with
        ``baseline=True``, ``(scores, the model's score on the rows)``.
        ``n_jobs`` and ``progress`` are taken for the engine's signature:
        the work is a few operations per row."""
        # the scorer itself first: it checks y (and raises as predicting
        # would) before any formula reads it
        base = score(scorer, self.link, self.decision, y, sample_weight)
        direct = self._direct(scoring, y, sample_weight)
        score_of = self._score_of(scorer, direct, y, sample_weight)
        checks = self._checks(scorer, direct)
        reference = None
        if checks == "ranks":
            reference = np.sort(self.decision, axis=0)
        scores = {}
        for i, g in enumerate(selected):
            columns, block, mixed = groups[g], self.blocks[g], self.replaced[g]
            coef = self.coef[:, block]
            contribution = self.inputs[:, block] @ coef.T
            for r, permutation in enumerate(permutations):
                new_block = self._new_block(columns, block, mixed, permutation)
                change = new_block @ coef.T - contribution
                raw = self.decision + change
                candidates = np.any(change != 0, axis=1)
                self._repair(raw, candidates, checks, reference, block, new_block)
                scores[i, r] = score_of(raw)
        table = score_table(scores, len(selected), len(permutations))
        if not baseline:
            return table
        return table, base
