"""Importance of a fitted Pipeline on the tree engine, per original column.

A fitted Pipeline is ``model(T(X))``, where ``T``, its fitted
preprocessing, maps the rows. When the engine reads the model, the
permutation importance of an original column (or group of columns) is
computed on the model's inputs: ``T(X)`` once, then, for each group and
permutation, only the model inputs the group feeds change.

Which model inputs an original column feeds comes from the fitted objects
(``input_sources``): the columns a ``ColumnTransformer`` gives each of its
transformers and the outputs it records for each (``output_indices_``),
the steps of nested Pipelines and FeatureUnions, and, for the transformers
that map each input column to outputs of its own (scalers, imputers,
encoders, discretizers, element-wise functions), their own fitted column
mapping, and for PolynomialFeatures its powers. A transformer not known
to do that is taken to let each of its outputs depend on all of its
inputs: never less than the truth.

- When every model input a group feeds depends on the group's columns
  alone, ``T(X with the group permuted)`` is ``T(X)`` with those inputs'
  rows permuted by the same permutation: the engine permutes that block.
- Otherwise those inputs take the values of ``T(X with the group
  permuted)``, computed once per group and permutation, and the engine
  replaces them by these values.

Both are exact: the model's outputs are those of its own ``predict`` on
``T(X)`` with the group permuted, which is what the Pipeline predicts.
"""

import numpy as np
import scipy.sparse
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import (
    Binarizer,
    FunctionTransformer,
    KBinsDiscretizer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    PowerTransformer,
    QuantileTransformer,
    RobustScaler,
    StandardScaler,
)

from .._engine import (
    GivenValues,
    Permutation,
    replaced_scores,
    tree_ensemble,
    worth_rerouting,
)
from .._utils._compat import column_transformer_inputs
from .._utils._frames import assign_permuted, writable_copy

#: Transformers whose output k is a function of input column k alone.
ONE_TO_ONE = (
    StandardScaler,
    MinMaxScaler,
    MaxAbsScaler,
    RobustScaler,
    QuantileTransformer,
    PowerTransformer,
    OrdinalEncoder,
    Binarizer,
)


def pipeline_inputs(estimator, X, groups):
    """:class:`PipelineInputs` of a fitted Pipeline whose last step the
    engine reads (and which has steps before it) on the rows X, else None."""
    if not isinstance(estimator, Pipeline) or len(estimator.steps) < 2:
        return None
    ensemble = tree_ensemble(estimator.steps[-1][1])
    if ensemble is None:
        return None
    return PipelineInputs(estimator, ensemble, X, groups)


def dense_inputs(model, transformed):
    """The model's inputs as a dense table that the model reads as it reads
    ``transformed``: a sparse matrix's entries it does not store are zeros
    to scikit-learn's and LightGBM's models, but missing values to XGBoost,
    which sends them along each split's default branch (NaN in a dense
    table)."""
    if not scipy.sparse.issparse(transformed):
        return transformed
    if type(model).__module__.split(".")[0] != "xgboost":
        return transformed.toarray()
    stored = transformed.tocoo()
    dense = np.full(stored.shape, np.nan)
    dense[stored.row, stored.col] = stored.data
    return dense


def _one_to_one(n_inputs):
    return [frozenset([k]) for k in range(n_inputs)]


def _widths(transformer, n_inputs):
    """Outputs per input column of a transformer that maps each input
    column to consecutive outputs of its own, or None."""
    if isinstance(transformer, OneHotEncoder):
        widths = []
        infrequent = getattr(transformer, "infrequent_categories_", None)
        drop = getattr(transformer, "drop_idx_", None)
        for i, categories in enumerate(transformer.categories_):
            width = len(categories)
            if infrequent is not None and infrequent[i] is not None:
                width -= len(infrequent[i]) - 1
            if drop is not None and drop[i] is not None:
                width -= 1
            widths.append(width)
        return widths
    if isinstance(transformer, KBinsDiscretizer):
        if transformer.encode == "ordinal":
            return [1] * n_inputs
        return [int(n) for n in transformer.n_bins_]
    if isinstance(transformer, ONE_TO_ONE):
        return [1] * n_inputs
    if (
        isinstance(transformer, FunctionTransformer)
        and transformer.feature_names_out == "one-to-one"
    ):
        return [1] * n_inputs
    return None


def _imputer_sources(imputer, n_inputs):
    """SimpleImputer: one output per kept input column (columns with no
    observed value are dropped unless ``keep_empty_features``), then one
    missing-value indicator per column its indicator tracks."""
    statistics = np.asarray(imputer.statistics_)
    kept = np.arange(n_inputs)
    if not imputer.keep_empty_features and statistics.dtype.kind == "f":
        kept = kept[~np.isnan(statistics)]
    sources = [frozenset([int(k)]) for k in kept]
    if imputer.add_indicator:
        sources += [frozenset([int(k)]) for k in imputer.indicator_.features_]
    return sources


def input_sources(transformer, n_inputs):
    """For each output column of a fitted transformer, the input columns it
    may depend on (a frozenset of positions): exact for the transformers
    this module knows, all of a transformer's inputs otherwise; None when
    not even the number of outputs is known without transforming."""
    from sklearn.impute import SimpleImputer

    if transformer is None or transformer == "passthrough":
        return _one_to_one(n_inputs)
    if hasattr(transformer, "output_sources"):  # a step that says it itself
        return transformer.output_sources()
    if transformer == "drop":
        return []
    if isinstance(transformer, Pipeline):
        sources = _one_to_one(n_inputs)
        for _, step in transformer.steps:
            if step is None or step == "passthrough":
                continue
            step_sources = input_sources(step, len(sources))
            if step_sources is None:
                return None
            sources = [
                frozenset().union(*(sources[m] for m in inner))
                for inner in step_sources
            ]
        return sources
    if isinstance(transformer, ColumnTransformer):
        inputs = column_transformer_inputs(transformer)
        n_outputs = max(
            (s.stop for s in transformer.output_indices_.values()), default=0
        )
        sources = [frozenset()] * n_outputs
        for name, step, _ in transformer.transformers_:
            columns = np.asarray(inputs.get(name, []), dtype=int)
            output = transformer.output_indices_.get(name, slice(0, 0))
            if output.stop - output.start == 0:
                continue
            step_sources = input_sources(step, len(columns))
            if step_sources is None:  # not known: every output from every input
                step_sources = [frozenset(range(len(columns)))] * (
                    output.stop - output.start
                )
            for k, inner in zip(range(output.start, output.stop), step_sources):
                sources[k] = frozenset(int(columns[m]) for m in inner)
        return sources
    if isinstance(transformer, FeatureUnion):
        sources = []
        for _, step in transformer.transformer_list:
            if step == "drop" or step is None:
                continue
            step_sources = input_sources(step, n_inputs)
            if step_sources is None:
                return None
            sources += step_sources
        return sources
    if isinstance(transformer, SimpleImputer):
        return _imputer_sources(transformer, n_inputs)
    if isinstance(transformer, PolynomialFeatures):
        # each output is a product of powers of the inputs: it depends on
        # those with a positive power (the bias on none)
        return [frozenset(np.flatnonzero(row).tolist()) for row in transformer.powers_]
    widths = _widths(transformer, n_inputs)
    if widths is not None:
        return [frozenset([i]) for i, width in enumerate(widths) for _ in range(width)]
    try:  # a transformer not known: every output from every input
        n_outputs = len(transformer.get_feature_names_out())
    except Exception:  # no names: the count is known only from a transform
        return None
    return [frozenset(range(n_inputs))] * n_outputs


def fed_blocks(sources, groups):
    """For each group of original columns, the model inputs it feeds
    (``sources``: each input's columns, :func:`input_sources`), and whether
    any of them also depends on columns outside the group."""
    blocks, mixed = [], []
    for columns in groups:
        group = frozenset(int(c) for c in columns)
        fed = [k for k, inner in enumerate(sources) if inner & group]
        blocks.append(np.asarray(fed, dtype=np.intp))
        mixed.append(not all(sources[k] <= group for k in fed))
    return blocks, mixed


class PipelineInputs:
    """The model inputs of a fitted Pipeline on some rows, and how each
    group of original columns reaches them.

    Parameters
    ----------
    pipeline : Pipeline
        Fitted; its last step is read by the engine.
    ensemble : TreeEnsemble
        The engine's ensemble of the last step.
    X : array-like or DataFrame
        The rows, as the Pipeline takes them.
    groups : list of ndarray
        Original column positions of each group.
    """

    def __init__(self, pipeline, ensemble, X, groups):
        self.pipeline = pipeline
        self.ensemble = ensemble
        self.model = pipeline.steps[-1][1]
        self.preprocessing = pipeline[:-1]
        self.X = X
        self.inputs = self._engine_input(X)
        sources = input_sources(self.preprocessing, X.shape[1])
        if sources is None or len(sources) != self.inputs.shape[1]:
            # the outputs could not be counted: every input from every column
            sources = [frozenset(range(X.shape[1]))] * self.inputs.shape[1]
        self.blocks, self.replaced = fed_blocks(sources, groups)

    def _engine_input(self, X):
        transformed = dense_inputs(self.model, self.preprocessing.transform(X))
        # the ensemble's adapter, read once (a new one would export and
        # parse the model again for every replaced block)
        return np.ascontiguousarray(self.ensemble.adapter.engine_input(transformed))

    def replacements(self, groups, blocks, mixed, permutations):
        """The engine's replacements of each group's block: the block's rows
        permuted, or, where an input mixes the group's columns with others
        (``mixed``), the block's values in ``T(X with the group
        permuted)``."""
        tasks = []
        for columns, block, replaced in zip(groups, blocks, mixed):
            if not replaced:
                tasks.append([Permutation(np.asarray(p)) for p in permutations])
                continue
            X_work = writable_copy(self.X)
            given = []
            for permutation in permutations:
                X_work = assign_permuted(X_work, self.X, columns, permutation)
                values = self._engine_input(X_work)[:, block]
                given.append(GivenValues(np.ascontiguousarray(values)))
            tasks.append(given)
        return tasks

    def feeds_model(self):
        """Whether each group feeds any model input (a column a step drops
        feeds none: permuting it changes no prediction)."""
        return np.array([len(block) > 0 for block in self.blocks], dtype=bool)

    def paths(self, rerouted):
        """How each group was measured, for the result: "block" (its model
        inputs permuted by the engine), "transformed" (inputs it mixes with
        other columns replaced by the transform of the permuted rows, by the
        engine), "predicted" (the Pipeline predicted every row: the engine
        would not have been faster) or "unused" (no model input: 0)."""
        out = []
        for block, mixed, engine in zip(self.blocks, self.replaced, rerouted):
            if len(block) == 0:
                out.append("unused")
            elif not engine:
                out.append("predicted")
            else:
                out.append("transformed" if mixed else "block")
        return np.asarray(out, dtype=object)

    def worth_rerouting(self, selected):
        """Which of the groups ``selected`` (positions) the engine computes
        faster than predicting every row."""
        return worth_rerouting(
            self.ensemble, self.inputs, [self.blocks[g] for g in selected]
        )

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
        """Scores of the Pipeline with each group ``selected`` (positions in
        ``groups``, the original columns of each) permuted by each
        permutation, computed by the engine on the model's inputs; with
        ``baseline=True``, ``(scores, the Pipeline's score on the rows)``."""
        return replaced_scores(
            self.model,
            self.ensemble,
            self.inputs,
            y,
            sample_weight,
            [self.blocks[g] for g in selected],
            self.replacements(
                [groups[g] for g in selected],
                [self.blocks[g] for g in selected],
                [self.replaced[g] for g in selected],
                permutations,
            ),
            scorer,
            n_jobs,
            scoring=scoring,
            progress=progress,
            baseline=baseline,
        )


class ColumnSums:
    """How the model inputs of a fitted Pipeline sum to its original
    columns, for the additive measures (MDI, MDI-oob, SHAP values).

    ``matrix`` (n_model_inputs, n_columns) has a 1 where a model input
    depends on that original column alone; ``mixed`` lists the model inputs
    that depend on several (their shares are not defined). ``sum(values)``
    sums the rows of ``values`` (one per model input) per original column,
    and raises when a mixed input has a non-zero value.
    """

    def __init__(self, pipeline, method):
        self.pipeline = pipeline
        self.method = method
        self.model = pipeline.steps[-1][1]
        self.preprocessing = pipeline[:-1]
        self.n_columns = pipeline.n_features_in_
        names = getattr(pipeline, "feature_names_in_", None)
        self.labels = (
            [str(n) for n in names]
            if names is not None
            else [f"x{i}" for i in range(self.n_columns)]
        )
        sources = input_sources(self.preprocessing, self.n_columns)
        n_inputs = getattr(self.model, "n_features_in_", None)
        if sources is None or (n_inputs is not None and len(sources) != n_inputs):
            raise ValueError(
                f"{method}_importance of a Pipeline sums each original column's "
                "model inputs, and which inputs each column feeds could not be "
                f"read from the fitted steps ({', '.join(pipeline.named_steps)}). "
                "Use permutation_importance, which permutes the original "
                "columns, or pass the last step and the transformed rows."
            )
        self.sources = sources
        self.matrix = np.zeros((len(sources), self.n_columns))
        self.mixed = []
        for k, inner in enumerate(sources):
            if len(inner) == 1:
                self.matrix[k, next(iter(inner))] = 1.0
            elif len(inner) > 1:
                self.mixed.append(k)

    def blocks(self, groups):
        """For each group of original columns, the model inputs it feeds,
        and whether any of them also depends on columns outside it."""
        return fed_blocks(self.sources, groups)

    def transform(self, X):
        """The model's inputs of the rows X, dense."""
        return dense_inputs(self.model, self.preprocessing.transform(X))

    def sum(self, values):
        """``values`` (model inputs first, any trailing axes) summed per
        original column."""
        values = np.asarray(values, dtype=np.float64)
        used = [k for k in self.mixed if np.any(values[k] != 0)]
        if used:
            names = _input_names(self.preprocessing, len(self.sources))
            k = used[0]
            columns = [self.labels[c] for c in sorted(self.sources[k])]
            raise ValueError(
                f"{self.method}_importance of a Pipeline sums each original "
                "column's model inputs, and the model uses input "
                f"{names[k]!r}, which a step computes from several columns "
                f"({', '.join(map(repr, columns))}): its share of each is not "
                "defined. Use permutation_importance, which permutes the "
                "original columns (groups= to permute those together), or "
                "keep the mixing step out of the Pipeline."
            )
        return np.tensordot(self.matrix, values, axes=([0], [0]))


def _input_names(preprocessing, n_inputs):
    try:
        return [str(n) for n in preprocessing.get_feature_names_out()]
    except Exception:  # a step without names: positions
        return [f"input {k}" for k in range(n_inputs)]


def column_sums(estimator, method):
    """:class:`ColumnSums` of a fitted Pipeline with steps before its model,
    else None (the estimator is measured as it is)."""
    if not isinstance(estimator, Pipeline) or len(estimator.steps) < 2:
        return None
    return ColumnSums(estimator, method)


def for_columns(estimator, support, feature_names):
    """``estimator`` to be fitted on X's selected columns (``support``): a
    Pipeline of two steps or more pruned (:func:`pruned_pipeline`), so that a
    ColumnTransformer listing columns finds the ones it is given; any other
    estimator as it is."""
    if isinstance(estimator, Pipeline) and len(estimator.steps) >= 2:
        return pruned_pipeline(estimator, support, feature_names)
    return estimator


def pruned_pipeline(pipeline, support, feature_names):
    """A clone of ``pipeline`` for X's selected columns (``support``): a
    first-step ColumnTransformer that lists columns by name or position
    lists only the selected ones (renumbered), and a transformer left with
    none is dropped. Other steps are kept as they are."""
    pipeline = clone(pipeline)
    first = pipeline.steps[0][1]
    if not isinstance(first, ColumnTransformer):
        return pipeline
    kept = set(np.flatnonzero(support).tolist())
    new_position = {old: new for new, old in enumerate(sorted(kept))}
    names = [str(n) for n in feature_names]
    transformers = []
    for name, transformer, columns in first.transformers:
        if callable(columns) or isinstance(columns, (str, slice)) or columns is None:
            transformers.append((name, transformer, columns))
            continue
        columns = np.atleast_1d(columns).tolist()
        if columns and isinstance(columns[0], (bool, np.bool_)):
            columns = list(np.flatnonzero(columns))
        if columns and isinstance(columns[0], str):
            chosen = [c for c in columns if names.index(c) in kept]
        else:
            chosen = [new_position[int(c)] for c in columns if int(c) in kept]
        if chosen:
            transformers.append((name, transformer, chosen))
    first = clone(first).set_params(transformers=transformers)
    pipeline.steps[0] = (pipeline.steps[0][0], first)
    return pipeline
