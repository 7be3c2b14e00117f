"""What one measure of the selector costs: the options that bound it.

A probe test fits the model once per round and measures every column
(features and probes). The measure's own repeats and rows multiply that
work (``docs/probe_test.rst``, "What a round costs"), so the selector's
"auto" options size them for the rounds:

- ``n_repeats="auto"``: one permutation (or conditional draw) per column in
  each round. The rounds already repeat, each with a fresh model and fresh
  permutations, and the test averages them; five permutations per round
  cost five times as much for the same test.
- ``max_samples="auto"``: at most ``ROUND_MAX_ROWS`` scored rows per round,
  drawn afresh each round. Beyond some ten thousand rows a permutation or
  SHAP importance ranks columns as all rows do, and its cost grows with the
  rows.

Without probes (a numeric, "mean" or "median" threshold, or ``prefit``)
there is one measure, and "auto" is what the importance functions do alone
(five repeats, every row).
"""

#: Permutations (or conditional draws) per column in each round of probes
#: (``n_repeats="auto"``).
ROUND_REPEATS = 1
#: ... and in a single measure without probes: the importance functions'
#: default.
SINGLE_MEASURE_REPEATS = 5
#: Rows a round's permutation, conditional or SHAP measure scores, at most
#: (``max_samples="auto"``).
ROUND_MAX_ROWS = 10_000


def measure_repeats(n_repeats, use_probes):
    """``n_repeats`` as the importance function takes it."""
    if n_repeats != "auto":
        return n_repeats
    return ROUND_REPEATS if use_probes else SINGLE_MEASURE_REPEATS


def measure_rows(max_samples, use_probes):
    """``max_samples`` as the selector's measure takes it (an int is capped
    at the rows there are by ``_measure.rows_limit``)."""
    if max_samples != "auto":
        return max_samples
    return ROUND_MAX_ROWS if use_probes else None
