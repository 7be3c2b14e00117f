"""Breiman's per-tree out-of-bag permutation importance: the engine's entry
point for ``oob_permutation_importance(per_tree=True)``."""

import numpy as np

from .._utils._scoring import AdditiveScore, score_outputs


def _tree_outputs(ensemble, term, leaves):
    """One tree's outputs in the engine's layout (n_rows, n_outputs)."""
    values = term.table[leaves]
    if term.columns is not None:
        full = np.zeros((len(leaves), ensemble.n_outputs))
        full[:, term.columns] = values
        values = full
    return values


def per_tree_oob_drops(
    estimator,
    ensemble,
    t,
    rows,
    X,
    y,
    sample_weight,
    groups,
    n_repeats,
    seed,
    scorer,
    scoring,
):
    """Breiman's per-tree importances of tree ``t`` on its out-of-bag
    ``rows``: ``(baseline, drops)``, the tree's score on them and the drops
    of its score with each group permuted within them, shape (n_groups,
    n_repeats).

    Same permutations and results as the predict-every-row path; a group
    that no path of the tree uses gets exactly 0. For accuracy, R² and mean
    squared error, a permuted score is updated from the re-routed rows
    alone. ``X`` is already validated against the estimator.
    """
    term = ensemble.terms[t]
    X_rows = np.ascontiguousarray(X[rows], dtype=ensemble.adapter.input_dtype)
    y_rows = y[rows]
    weight = None if sample_weight is None else sample_weight[rows]
    every_row = np.arange(len(rows))
    generator = np.random.RandomState(seed)
    permutations = np.array(
        [generator.permutation(len(rows)) for _ in range(n_repeats)],
        dtype=np.int64,
    ).reshape(n_repeats, len(rows))
    # each group's moved rows come lazily, group after group
    base_leaves, group_moves = ensemble.backend.tree_moves(
        ensemble, t, X_rows, permutations, groups
    )

    def tree_score(leaves):
        outputs = ensemble.adapter.scorer_outputs(_tree_outputs(ensemble, term, leaves))
        return score_outputs(scorer, outputs, y_rows, weight)

    additive = AdditiveScore.for_scoring(estimator, scoring, y_rows, weight)
    if additive is None:
        baseline = tree_score(base_leaves)
    else:
        # each node's prediction, read once rather than per moved row
        node_predictions = additive.predictions(
            _tree_outputs(ensemble, term, np.arange(term.tree.node_count))
        )
        base_terms = additive.prediction_terms(node_predictions[base_leaves], every_row)
        base_total = base_terms.sum()
        baseline = additive.score(base_total)

    # a score of several metrics is an array: one drop per metric
    drops = np.zeros((len(groups), n_repeats, *np.shape(baseline)))
    for g, moves in enumerate(group_moves):
        if moves is None:
            continue  # no path uses the group: exactly 0, nothing to score
        changed, new_leaves, counts = moves
        if additive is not None:
            change = additive.prediction_terms(node_predictions[new_leaves], changed)
            change -= base_terms[changed]
            repeat = np.repeat(np.arange(n_repeats), counts)
            totals = base_total + np.bincount(repeat, change, minlength=n_repeats)
            drops[g] = [baseline - additive.score(total) for total in totals]
            continue
        ends = np.cumsum(counts)
        for r, (first, last) in enumerate(zip(ends - counts, ends)):
            if first == last:
                continue  # every row keeps its path: the drop is exactly 0
            leaves = base_leaves.copy()
            leaves[changed[first:last]] = new_leaves[first:last]
            drops[g, r] = baseline - tree_score(leaves)
    return baseline, drops
