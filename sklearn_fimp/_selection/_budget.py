"""What one measure of the selector costs: the options that bound it.

A probe test fits the model once per round and measures every column
(features and probes). The measure's own repeats and rows multiply that
work (``docs/probe_test.rst``, "What a round costs"), so the selector's
"auto" options size them for the rounds:

- ``n_rounds="auto"``: ten rounds, and one for drop-column, which refits
  the model once per column and probe in every round.
- ``n_repeats="auto"``: one permutation (or conditional draw) per column in
  each round. The rounds already repeat, each with a fresh model and fresh
  permutations, and the test averages them; five permutations per round
  cost five times as much for the same test.
- ``max_samples="auto"``: at most ``ROUND_MAX_ROWS`` scored rows per round
  (``SHAP_ROUND_MAX_ROWS`` for SHAP, whose exact values cost far more per
  row), drawn afresh each round. Beyond some ten thousand rows a permutation
  importance ranks columns as all rows do, and its cost grows with the
  rows.

Without probes (a numeric, "mean" or "median" threshold, or ``prefit``)
there is one measure, and "auto" is what the importance functions do alone
(five repeats, every row).

The score a permutation or drop-column measure is scored by
(``measure_scoring``) is part of the cost of power: a proper scoring rule on
probabilities moves with every row, but log-loss is unbounded, and a bagged
ensemble's probabilities are shares of its trees' votes, exactly 0 for a
class no tree predicts. One such row of the scored class then costs
``-log(eps) = 36`` where a typical row costs well under 1, and the score
measures which rows reach 0 rather than what a column adds
(``docs/probe_test.rst``). The Brier score is bounded: for a bagged
classifier of a binary target it is the default.
"""

import numpy as np
from sklearn.utils.multiclass import type_of_target

from .._utils._scoring import probability_scoring
from ._rounds import forest_trees

#: Rounds of probes (``n_rounds="auto"``) ...
ROUNDS = 10
#: ... and for a method that refits the model once per column in each round
#: (drop-column): one round of the rounds' model (a forest's 30 of 100
#: trees) on the features and as many probes costs about what
#: ``drop_column_importance`` costs alone, one refit of the whole model per
#: feature.
REFIT_ROUNDS = 1
#: Permutations (or conditional draws) per column in each round of probes
#: (``n_repeats="auto"``).
ROUND_REPEATS = 1
#: ... and in a single measure without probes: the importance functions'
#: default.
SINGLE_MEASURE_REPEATS = 5
#: Rows a round's permutation or conditional measure scores, at most
#: (``max_samples="auto"``).
ROUND_MAX_ROWS = 10_000
#: ... and a round's SHAP measure: TreeExplainer's exact values cost some
#: milliseconds per row on a forest of the rounds' 30 trees, as much as the
#: round's fit for a few hundred rows.
SHAP_ROUND_MAX_ROWS = 256


def round_count(n_rounds, method):
    """``n_rounds`` ("auto" or an int) for ``method`` (a registry entry, or
    None)."""
    if n_rounds != "auto":
        return n_rounds
    refits = method is not None and not method.fits_model
    return REFIT_ROUNDS if refits else ROUNDS


def measure_repeats(n_repeats, use_probes):
    """``n_repeats`` as the importance function takes it."""
    if n_repeats != "auto":
        return n_repeats
    return ROUND_REPEATS if use_probes else SINGLE_MEASURE_REPEATS


def measure_rows(max_samples, use_probes, method):
    """``max_samples`` as the selector's measure by ``method`` (a registry
    entry, or None) takes it (an int is capped at the rows there are by
    ``_measure.rows_limit``)."""
    if max_samples != "auto":
        return max_samples
    if not use_probes:
        return None
    shap = method is not None and method.name == "shap"
    return SHAP_ROUND_MAX_ROWS if shap else ROUND_MAX_ROWS


def measure_scoring(estimator, scoring, y):
    """The scoring of the selector's measure: ``scoring`` when given; for a
    bagged ensemble of trees (alone or ending a Pipeline) classifying a
    binary target of numeric labels, the Brier score (bounded where
    log-loss is not, see above; scikit-learn's Brier scorer needs numeric
    labels to know the positive class); otherwise ``probability_scoring``'s
    (log-loss for a classifier with probabilities, the model's score)."""
    chosen = probability_scoring(estimator, scoring)
    if chosen != "neg_log_loss" or scoring is not None:
        return chosen
    binary = type_of_target(y) == "binary" and np.asarray(y).dtype.kind in "biuf"
    return "neg_brier_score" if binary and forest_trees(estimator) else chosen
