"""Permutation importance and feature selection on data spread over
machines (Spark, Dask): the rows stay where they live and only sums (and
one number per column and round) come back to the driver.

- ``_permutations.py``: the global permutation each row computes for
  itself (a keyed Feistel network on the rows' indices);
- ``_scores.py``: the scores that combine from sums over partitions;
- ``_partition.py``: what runs on the workers, the same for every engine;
- ``_spark.py`` and ``_dask.py``: moving rows and sums on each engine;
- ``_importance.py``: the public importance function;
- ``_selection.py``: the probe test's rounds of fits on Spark.
"""

from ._importance import distributed_permutation_importance, permutation_sources
from ._selection import distributed_select_features

__all__ = [
    "distributed_permutation_importance",
    "distributed_select_features",
    "permutation_sources",
]
