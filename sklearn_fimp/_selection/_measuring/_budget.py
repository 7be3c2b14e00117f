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
  (a method's ``round_rows`` in the registry where it costs far more per
  row: SHAP's exact values), drawn afresh each round. Beyond some ten
  thousand rows a permutation importance ranks columns as all rows do, and
  its cost grows with the rows.

Without probes (a numeric, "mean" or "median" threshold, or ``prefit``)
there is one measure, and "auto" is what the importance functions do alone
(five repeats, every row).

The score a round's measure is scored by is the round model's
(``_round_models.py``): a bagged forest's vote shares on a binary target
by the Brier score.
"""

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
    if method is not None and method.round_rows is not None:
        return method.round_rows
    return ROUND_MAX_ROWS
