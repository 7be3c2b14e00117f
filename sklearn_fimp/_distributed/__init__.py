"""Permutation importance on data spread over machines (Spark, Dask): the
rows stay where they live and only sums come back to the driver.

- ``_permutations.py``: the global permutation each row computes for
  itself (a keyed Feistel network on the rows' indices);
- ``_scores.py``: the scores that combine from sums over partitions;
- ``_partition.py``: what runs on the workers, the same for every engine;
- ``_spark.py`` and ``_dask.py``: moving rows and sums on each engine;
- ``_importance.py``: the public function.

The selection on Spark (``_selection/_distributed.py``) builds on them:
``_partition.shadowed_rows`` and ``SparkTable.with_probes`` make its probes.
"""

from ._importance import distributed_permutation_importance, permutation_sources

__all__ = ["distributed_permutation_importance", "permutation_sources"]
