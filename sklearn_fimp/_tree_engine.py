"""Exact permutation importance for tree ensembles, re-routing only the rows
whose decision path uses a permuted feature.

Permuting feature ``j`` can change a tree's prediction for a row only if the
row's path in that tree passes through a node that splits on ``j``. The
engine routes the evaluation rows through every tree once, recording each
row's leaf and the features its path uses; then, for each group of features
and each permutation, it re-routes only the affected rows of each tree and
adds the change of that tree's leaf value to the ensemble's output. The
outputs (probabilities, decision values or regression values) are then
handed to the scorer through a stand-in estimator, so any scorer works and
the importances equal those of the predict-every-row path for the same
permutations, to floating-point precision.

Memory is bounded by routing rows in chunks and by processing groups in
batches whose accumulated output changes fit a fixed budget; X is never
copied per feature.
"""

from typing import NamedTuple

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from scipy import sparse
from sklearn.base import is_classifier
from sklearn.ensemble import (
    BaggingClassifier,
    BaggingRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
)
from sklearn.tree import BaseDecisionTree
from sklearn.utils.validation import validate_data

from ._compat import gradient_boosting_proba
from ._oob import FORESTS
from ._scoring import (
    StoredClassifierOutputs,
    StoredRegressorOutputs,
    score_outputs,
)

#: Rows routed at once through all trees (bounds the leaf and path caches).
CHUNK_ROWS = 50_000
#: Bytes allowed for the accumulated output changes of one batch of groups.
BATCH_BYTES = 256 * 2**20


class TreeTerm(NamedTuple):
    """One tree's contribution to the ensemble output.

    ``table[leaf]`` is added to the output columns ``columns`` for rows that
    reach ``leaf``; ``features`` maps the tree's inputs to columns of X (None:
    all columns, in order).
    """

    tree: object
    features: np.ndarray | None
    columns: np.ndarray
    table: np.ndarray


class TreeEnsemble(NamedTuple):
    """What the engine needs of a supported ensemble."""

    terms: list
    n_outputs: int
    #: Learning rate of boosted trees (bagged trees are averaged instead).
    scale: float
    #: "forest_classifier", "forest_regressor" (averaged trees, including a
    #: single tree and Bagging), "boosting_classifier", "boosting_regressor"
    kind: str


def tree_ensemble(estimator):
    """Describe a supported tree ensemble, or return None.

    Supported: DecisionTree*, RandomForest*, ExtraTrees*, Bagging* of
    decision trees and GradientBoosting*, single-output.
    """
    classifier = is_classifier(estimator)
    if classifier and np.ndim(estimator.classes_[0]) > 0:
        return None  # multi-output classification
    if isinstance(estimator, (BaseDecisionTree, FORESTS)):
        trees = (
            [estimator]
            if isinstance(estimator, BaseDecisionTree)
            else list(estimator.estimators_)
        )
        features = [None] * len(trees)
    elif isinstance(estimator, (BaggingClassifier, BaggingRegressor)):
        trees = list(estimator.estimators_)
        if not all(isinstance(t, BaseDecisionTree) for t in trees):
            return None
        features = [np.asarray(f) for f in estimator.estimators_features_]
    elif isinstance(estimator, (GradientBoostingClassifier, GradientBoostingRegressor)):
        stages = estimator.estimators_
        n_columns = stages.shape[1]
        terms = [
            TreeTerm(
                stages[i, k],
                None,
                np.array([k]),
                stages[i, k].tree_.value[:, 0, :1],
            )
            for i in range(stages.shape[0])
            for k in range(n_columns)
        ]
        kind = "boosting_classifier" if classifier else "boosting_regressor"
        return TreeEnsemble(terms, n_columns, float(estimator.learning_rate), kind)
    else:
        return None

    if classifier:
        # Leaf class fractions; members trained on encoded labels may know
        # only some of the ensemble's classes.
        terms = [
            TreeTerm(
                tree,
                feats,
                np.asarray(tree.classes_, dtype=np.intp),
                tree.tree_.value[:, 0, :],
            )
            for tree, feats in zip(trees, features)
        ]
        n_classes = len(estimator.classes_)
        return TreeEnsemble(terms, n_classes, 1.0, "forest_classifier")
    n_outputs = trees[0].tree_.value.shape[1]
    terms = [
        TreeTerm(tree, feats, np.arange(n_outputs), tree.tree_.value[:, :, 0])
        for tree, feats in zip(trees, features)
    ]
    return TreeEnsemble(terms, n_outputs, 1.0, "forest_regressor")


def engine_input(estimator, X):
    """X as the trees read it: float32, validated against the estimator."""
    return validate_data(
        estimator, X, reset=False, dtype=np.float32, ensure_all_finite=False
    )


def base_outputs(estimator, ensemble, X):
    """The ensemble's unpermuted output, through its public API, in the
    layout of the engine's output array (n_rows, n_outputs)."""
    if ensemble.kind == "forest_classifier":
        return estimator.predict_proba(X)
    if ensemble.kind == "boosting_classifier":
        return estimator.decision_function(X).reshape(X.shape[0], -1)
    return estimator.predict(X).reshape(X.shape[0], -1)


def stored_outputs(estimator, ensemble, outputs):
    """Wrap engine outputs (n_rows, n_outputs) for a scorer."""
    if ensemble.kind == "forest_classifier":
        return StoredClassifierOutputs(estimator.classes_, proba=outputs)
    if ensemble.kind == "boosting_classifier":
        decision = outputs[:, 0] if outputs.shape[1] == 1 else outputs
        return StoredClassifierOutputs(
            estimator.classes_,
            proba=gradient_boosting_proba(estimator, decision),
            decision=decision,
        )
    return StoredRegressorOutputs(outputs[:, 0] if outputs.shape[1] == 1 else outputs)


class RoutedTree(NamedTuple):
    """One tree's routing of a chunk of rows."""

    leaves: np.ndarray  # leaf of each row
    uses: sparse.csc_matrix  # (n_rows, n_features): path splits on feature


def route(term, X_chunk, n_features, rows=None):
    """Leaves and per-row feature use of a chunk (``rows``: subset, or all)."""
    X_tree = X_chunk if rows is None else X_chunk[rows]
    if term.features is not None:
        X_tree = X_tree[:, term.features]
    X_tree = np.ascontiguousarray(X_tree)
    tree = term.tree
    leaves = tree.apply(X_tree, check_input=False)
    path = tree.decision_path(X_tree, check_input=False)
    split_feature = tree.tree_.feature[path.indices]
    internal = split_feature >= 0
    path_rows = np.repeat(np.arange(X_tree.shape[0]), np.diff(path.indptr))
    features = split_feature[internal]
    if term.features is not None:
        features = term.features[features]
    uses = sparse.csc_matrix(
        (np.ones(internal.sum(), dtype=bool), (path_rows[internal], features)),
        shape=(X_tree.shape[0], n_features),
    )
    uses.sum_duplicates()
    return RoutedTree(leaves, uses)


def affected_rows(uses, columns):
    """Rows (of the routed chunk) whose path splits on any of ``columns``."""
    parts = [uses.indices[uses.indptr[c] : uses.indptr[c + 1]] for c in columns]
    if len(parts) == 1:
        return parts[0]
    return np.unique(np.concatenate(parts))


def _group_deltas(
    ensemble, routed, chunk_rows, X, groups, permutations, deltas, tree_rows
):
    """Add, for each group and permutation, the change of every tree's leaf
    value on its affected rows of one chunk to ``deltas[g, r]``."""
    for g, columns in enumerate(groups):
        for term, routing, rows in zip(ensemble.terms, routed, tree_rows):
            local = affected_rows(routing.uses, columns)
            if not len(local):
                continue
            # positions within the chunk, then global row numbers
            chunk_positions = local if rows is None else rows[local]
            global_rows = chunk_rows[chunk_positions]
            old = term.table[routing.leaves[local]]
            for r, permutation in enumerate(permutations):
                X_rows = X[global_rows]
                X_rows[:, columns] = X[np.ix_(permutation[global_rows], columns)]
                if term.features is not None:
                    X_rows = X_rows[:, term.features]
                leaves = term.tree.apply(
                    np.ascontiguousarray(X_rows), check_input=False
                )
                change = term.table[leaves] - old
                target = deltas[g, r]
                target[np.ix_(global_rows, term.columns)] += change


def _route_chunk(ensemble, X_chunk, n_features, tree_rows_chunk, n_jobs):
    return Parallel(n_jobs=n_jobs, prefer="threads")(
        delayed(route)(term, X_chunk, n_features, rows)
        for term, rows in zip(ensemble.terms, tree_rows_chunk)
    )


def permuted_output_changes(ensemble, X, groups, permutations, n_jobs, tree_rows=None):
    """Yield ``(group_indices, base_sum, deltas)`` batch by batch.

    ``base_sum`` (n_rows, n_outputs) is the sum of the trees' leaf values on
    the unpermuted rows, in tree order; ``deltas[g, r]`` the change of that
    sum when group ``g`` is permuted by ``permutations[r]``. ``tree_rows``
    restricts each tree to some rows (its out-of-bag rows).

    Sums are kept unscaled so that an ensemble of fully grown classification
    trees (leaf values 0 and 1) adds integers exactly, and ties between
    classes resolve as in the model's own ``predict``.
    """
    n_rows, n_features = X.shape
    n_repeats = len(permutations)
    per_group = n_repeats * n_rows * ensemble.n_outputs * 8
    batch_size = max(1, min(len(groups), BATCH_BYTES // max(per_group, 1)))
    n_workers = max(1, effective_n_jobs(n_jobs))
    base_sum = np.zeros((n_rows, ensemble.n_outputs))
    for start in range(0, len(groups), batch_size):
        batch = list(range(start, min(start + batch_size, len(groups))))
        deltas = np.zeros((len(batch), n_repeats, n_rows, ensemble.n_outputs))
        for chunk_start in range(0, n_rows, CHUNK_ROWS):
            chunk_rows = np.arange(chunk_start, min(chunk_start + CHUNK_ROWS, n_rows))
            if tree_rows is None:
                rows_in_chunk = [None] * len(ensemble.terms)
            else:
                rows_in_chunk = [
                    rows[(rows >= chunk_rows[0]) & (rows <= chunk_rows[-1])]
                    - chunk_start
                    for rows in tree_rows
                ]
            routed = _route_chunk(
                ensemble, X[chunk_rows], n_features, rows_in_chunk, n_jobs
            )
            if start == 0:
                for term, routing, rows in zip(ensemble.terms, routed, rows_in_chunk):
                    reached = chunk_rows if rows is None else chunk_rows[rows]
                    base_sum[np.ix_(reached, term.columns)] += term.table[
                        routing.leaves
                    ]
            # groups are split between workers; each writes its own slices
            parts = np.array_split(np.arange(len(batch)), min(n_workers, len(batch)))
            Parallel(n_jobs=n_jobs, prefer="threads")(
                delayed(_group_deltas)(
                    ensemble,
                    routed,
                    chunk_rows,
                    X,
                    [groups[batch[i]] for i in part],
                    permutations,
                    deltas[part[0] : part[-1] + 1],
                    rows_in_chunk,
                )
                for part in parts
                if len(part)
            )
        yield batch, base_sum, deltas


def fast_permuted_scores(
    estimator, ensemble, X, y, sample_weight, groups, permutations, scorer, n_jobs
):
    """Scores with each group permuted, on validation rows (engine path of
    :func:`~sklearn_fimp.permutation_importance`)."""
    X = engine_input(estimator, X)
    scores = np.empty((len(groups), len(permutations)))
    if ensemble.kind.startswith("boosting"):
        # decision values: the model's own raw output plus the scaled change
        public = base_outputs(estimator, ensemble, X)

        def finish(base_sum, delta):
            return public + ensemble.scale * delta

    else:

        def finish(base_sum, delta):
            return (base_sum + delta) / len(ensemble.terms)

    for batch, base_sum, deltas in permuted_output_changes(
        ensemble, X, groups, permutations, n_jobs
    ):
        for i, g in enumerate(batch):
            for r in range(len(permutations)):
                outputs = finish(base_sum, deltas[i, r])
                scores[g, r] = score_outputs(
                    scorer,
                    stored_outputs(estimator, ensemble, outputs),
                    y,
                    sample_weight,
                )
    return scores
