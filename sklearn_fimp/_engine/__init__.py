"""The tree engine: exact permutation importance for tree ensembles that
re-routes only the rows whose paths split on a permuted (or replaced)
column.

Permuting feature ``j`` can change a tree's prediction for a row only if the
row's path in that tree passes through a node that splits on ``j``. The
engine routes the evaluation rows through every tree once, recording each
row's leaf and the interval each feature its path uses may take; then, for
each group of features and each permutation, it re-routes only the rows that
leave their path, and adds the changes of the trees' leaf values to the
unpermuted totals. Rows left within rounding of a tie are recomputed tree by
tree in the model's order, so that the outputs (probabilities, decision
values or regression values) are the model's and the importances equal
those of the predict-every-row path for the same permutations. Memory is
bounded by routing rows in chunks and by processing groups in batches; X is
never copied per feature.

Layout (see ``docs/architecture.rst, "The engine"``):

- ``adapters/``: one module per model family, turning a fitted model into
  the engine's ensemble of terms (the interface is in ``adapters/_base.py``);
- ``_backend.py``: the compiled kernels or NumPy, chosen once;
- ``_kernels.py``: typed wrappers of the C kernels in ``_ckernels.c``;
- ``_routing.py``: leaves and per-feature intervals of each row;
- ``_changes.py``: the changes of the outputs when a group is permuted;
- ``_ties.py``: recomputing rows near a tie in the model's order;
- ``_budgets.py``: chunk, batch and memory budgets;
- ``_scores.py`` and ``_per_tree.py``: the entry points below.
"""

from ._changes import GivenValues, Permutation
from ._per_tree import per_tree_oob_drops
from ._scores import (
    engine_input,
    oob_permuted_scores,
    permuted_scores,
    replaced_scorer_outputs,
    replaced_scores,
    tree_ensemble,
    worth_rerouting,
)

__all__ = [
    "GivenValues",
    "Permutation",
    "engine_input",
    "oob_permuted_scores",
    "per_tree_oob_drops",
    "permuted_scores",
    "replaced_scorer_outputs",
    "replaced_scores",
    "tree_ensemble",
    "worth_rerouting",
]
