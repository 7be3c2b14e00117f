"""Spark: the rows stay in the partitions of a Spark DataFrame; the
partitions run ``_partition.py``'s functions through ``mapInPandas`` (Arrow
batches, in the executors' Python workers), the model travels as a
broadcast variable, and only the partitions' sums are collected."""

import weakref

import numpy as np

from .._importance._spark_trees import is_spark_model
from ._partition import (
    HELD_OUT,
    LABEL,
    REPEAT,
    TARGET,
    WEIGHT,
    exchanged_partitions,
    feature_column,
    partition_sums,
    partition_totals,
    probe_column,
    send_rows,
    shadowed_rows,
)


def is_spark_frame(X):
    """Whether X is a pyspark.sql DataFrame (classic or Connect), without
    importing pyspark."""
    cls = type(X)
    return cls.__name__ == "DataFrame" and cls.__module__.startswith("pyspark.sql")


#: snapshots of the pyspark.ml models read in this process, kept while the
#: model lives: reading a model's trees through py4j costs about 0.3 ms per
#: node (seconds for a forest), and a fitted model's trees never change
_SNAPSHOTS = weakref.WeakKeyDictionary()


def spark_model_snapshot(estimator):
    """The engine's snapshot of a fitted pyspark.ml tree model (read on the
    driver once per model), or None for any other estimator."""
    if not is_spark_model(estimator):
        return None
    from .._engine.adapters._spark_ml import SparkTreeModel

    thresholds = getattr(estimator, "thresholds", None)
    if thresholds is not None and estimator.isSet(thresholds):
        # thresholds may have been set since the model was read: from_spark
        # checks them (and refuses them) on every call
        return SparkTreeModel.from_spark(estimator)
    snapshot = _SNAPSHOTS.get(estimator)
    if snapshot is None:
        snapshot = _SNAPSHOTS[estimator] = SparkTreeModel.from_spark(estimator)
    return snapshot


def _vector_size(X, column):
    """The length of a vector column's vectors: from the column's ML
    attributes (VectorAssembler writes them), else from its first row."""
    size = X.schema[column].metadata.get("ml_attr", {}).get("num_attrs")
    if size is None:
        first = X.select(column).first()
        if first is None:
            raise ValueError(f"X has no rows: the size of {column!r} is unknown.")
        size = first[0].size
    return int(size)


def _partition_id():
    from pyspark import TaskContext

    return TaskContext.get().partitionId()


class SparkTable:
    """The feature columns, the target and the weights of a Spark DataFrame,
    renamed for the partitions (see ``_partition.py``).

    Parameters
    ----------
    estimator : the model (or a Spark model's snapshot)
    X : pyspark.sql.DataFrame
    y : str
        The target column.
    sample_weight : str or None
        The weight column.
    features : list of str, str or None
        The feature columns in the model's order, or one vector column
        (None: the model's ``feature_names_in_``).
    """

    engine = "spark"

    def __init__(self, estimator, X, y, sample_weight, features):
        from pyspark.sql import functions as F

        for name, value in (("y", y), ("sample_weight", sample_weight)):
            if value is not None and not isinstance(value, str):
                raise TypeError(
                    f"{name} must be a column name of the Spark DataFrame; got "
                    f"{type(value).__name__}."
                )
        if y not in X.columns:
            raise ValueError(f"y={y!r} is not a column of X.")
        if sample_weight is not None and sample_weight not in X.columns:
            raise ValueError(f"sample_weight={sample_weight!r} is not a column of X.")
        if features is None:
            names = getattr(estimator, "feature_names_in_", None)
            if names is None:
                raise ValueError(
                    "features is required: the model has no feature_names_in_; "
                    "pass the feature columns in the model's order, or a vector "
                    "column."
                )
            features = [str(name) for name in names]
        if isinstance(features, str):  # one vector column
            if features not in X.columns:
                raise ValueError(f"features={features!r} is not a column of X.")
            from pyspark.ml.functions import vector_to_array

            n_features = getattr(estimator, "n_features_in_", None)
            if n_features is None:
                n_features = _vector_size(X, features)
            n_features = int(n_features)
            array = vector_to_array(F.col(features))
            selected = [array[j].alias(feature_column(j)) for j in range(n_features)]
            self.feature_names = np.array(
                [f"{features}[{j}]" for j in range(n_features)], dtype=object
            )
            self.named = False
        else:
            missing = [c for c in features if c not in X.columns]
            if missing:
                raise ValueError(f"features names columns X does not have: {missing}")
            selected = [
                F.col(c).cast("double").alias(feature_column(j))
                for j, c in enumerate(features)
            ]
            self.feature_names = np.asarray([str(c) for c in features], dtype=object)
            self.named = True
        weight = F.lit(1.0) if sample_weight is None else F.col(sample_weight)
        self.frame = X.select(
            *selected,
            F.col(y).alias(LABEL),
            weight.cast("double").alias(WEIGHT),
        )
        self.n_features = len(self.feature_names)
        self.n_partitions = self.frame.rdd.getNumPartitions()
        self.label_type = self.frame.schema[LABEL].dataType.simpleString()

    def totals(self, score):
        """Each partition's :func:`partition_totals`, one row per partition
        in order."""
        import pandas as pd

        def totals(batches):
            frames = list(batches)
            frame = (
                pd.concat(frames) if frames else pd.DataFrame({LABEL: [], WEIGHT: []})
            )
            yield pd.DataFrame(
                {"p": [_partition_id()], "v": [partition_totals(frame, score)]}
            )

        # the first pass reads the target and the weights only (a narrow
        # select: the partitions stay the data's)
        rows = (
            self.frame.select(LABEL, WEIGHT)
            .mapInPandas(totals, "p long, v array<double>")
            .collect()
        )
        table = np.zeros(
            (self.n_partitions, 3 + (len(score.classes) if score.needs_classes else 0))
        )
        for row in rows:
            table[row["p"]] = row["v"]
        return table

    def _feature_schema(self):
        return ", ".join(f"{feature_column(j)} double" for j in range(self.n_features))

    def _exchanged(self, first_ids, permutation, n_repeats):
        """The rows :func:`send_rows` sends (each row as itself and once per
        repeat; the partitions' rows numbered from ``first_ids``), moved to
        the partitions of their targets: one exchange."""
        n_features = self.n_features
        first_ids = [int(first) for first in first_ids]
        schema = (
            f"{TARGET} long, {REPEAT} int, {self._feature_schema()}, "
            f"{LABEL} {self.label_type}, {WEIGHT} double"
        )

        def send(batches):
            first = first_ids[_partition_id()]
            for batch in batches:
                yield send_rows(batch, first, permutation, n_repeats, n_features)
                first += len(batch)

        n_exchanged = exchanged_partitions(
            permutation.n_rows, n_repeats, n_features, self.n_partitions
        )
        return self.frame.mapInPandas(send, schema).repartition(n_exchanged, TARGET)

    def sums(self, payload, permutation, groups, n_repeats, score, first_ids, lengths):
        """The partitions' :func:`partition_sums`, added (``lengths``, each
        partition's rows, is the tables' common signature: Dask cuts its
        pieces by them; Spark's partitions stay as they are)."""
        import pandas as pd

        model = self.frame.sparkSession.sparkContext.broadcast(payload)
        n_features = self.n_features

        def summed(batches):
            frames = list(batches)
            if frames:
                values = partition_sums(
                    pd.concat(frames, ignore_index=True),
                    model.value,
                    groups,
                    n_repeats,
                    score,
                    n_features,
                )
                yield pd.DataFrame({"v": [values]})

        exchanged = self._exchanged(first_ids, permutation, n_repeats)
        rows = exchanged.mapInPandas(summed, "v array<double>").collect()
        model.unpersist()
        return np.sum([np.asarray(row["v"]) for row in rows], axis=0)

    def counts(self):
        """The number of rows of each partition, in order."""
        import pandas as pd

        def count(batches):
            yield pd.DataFrame(
                {"p": [_partition_id()], "n": [sum(len(b) for b in batches)]}
            )

        counts = np.zeros(self.n_partitions, dtype=np.int64)
        for row in (
            self.frame.select(LABEL).mapInPandas(count, "p long, n long").collect()
        ):
            counts[row["p"]] = row["n"]
        return counts

    def with_probes(self, first_ids, permutation, n_layers, mirrored, held_out):
        """The rows with probe columns (see ``_partition.shadowed_rows``): a
        Spark DataFrame of the feature columns, the probe columns, ``__y``,
        ``__w`` and ``__held_out``, after one exchange of ``1 + n_layers``
        copies of the rows (the partitions' rows numbered from
        ``first_ids``)."""
        import pandas as pd

        n_features = self.n_features
        probes = ", ".join(f"{probe_column(k)} double" for k in range(len(mirrored)))
        schema = (
            f"{self._feature_schema()}, {probes}, {LABEL} {self.label_type}, "
            f"{WEIGHT} double, {HELD_OUT} boolean"
        )

        def assemble(batches):
            frames = list(batches)
            if frames:
                yield shadowed_rows(
                    pd.concat(frames, ignore_index=True),
                    n_layers,
                    mirrored,
                    n_features,
                    held_out,
                )

        exchanged = self._exchanged(first_ids, permutation, n_layers)
        return exchanged.mapInPandas(assemble, schema)
