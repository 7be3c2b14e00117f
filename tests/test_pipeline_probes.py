"""Probes through a Pipeline's preprocessing
(``sklearn_fimp/_selection/_measuring/_pipeline_probes.py``)."""

import numpy as np
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import RandomForestRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_fimp import ImportanceSelector
from sklearn_fimp._importance._pipeline import pruned_pipeline
from sklearn_fimp._selection._measuring._pipeline_probes import ProbeInputs

pd = pytest.importorskip("pandas")


def planted(n=800, seed=0):
    """Two numeric and one categorical column y depends on, a numeric and a
    categorical noise column."""
    rng = np.random.RandomState(seed)
    X = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "city": rng.choice(["x", "y", "z", "w"], n),
            "b": rng.normal(size=n),
            "noise": rng.normal(size=n),
            "noise_cat": rng.choice(["p", "q", "r"], n),
        }
    )
    y = 2 * X.a + X.b + 2 * (X.city == "x") + 0.5 * rng.normal(size=n)
    return X, y.to_numpy()


def named_preprocessing():
    return make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["city", "noise_cat"]),
        (StandardScaler(), ["a", "b", "noise"]),
    )


def test_probe_inputs_transform_a_shadow_as_its_original():
    X, y = planted()
    shadow = X.city.sample(frac=1, random_state=1).to_numpy()
    X_probed = X.assign(probe_0_city=shadow, probe_1_a=X.a[::-1].to_numpy())
    probes = [(np.array([5]), np.array([1])), (np.array([6]), np.array([0]))]
    inputs = ProbeInputs(named_preprocessing(), 5, probes).fit(X_probed, y)
    Z = inputs.transform(X_probed)
    own = named_preprocessing().fit(X).transform(X)
    own = own.toarray() if hasattr(own, "toarray") else own
    # the own columns, then the shadow of city one-hot encoded with city's
    # categories, then the shadow of a scaled with a's mean and scale
    n_own = own.shape[1]
    np.testing.assert_array_equal(Z[:, :n_own], own)
    encoder = OneHotEncoder().fit(X[["city"]])
    np.testing.assert_array_equal(
        Z[:, n_own : n_own + 4], encoder.transform(shadow.reshape(-1, 1)).toarray()
    )
    scaled = (X.a[::-1].to_numpy() - X.a.mean()) / X.a.std(ddof=0)
    np.testing.assert_allclose(Z[:, n_own + 4], scaled)
    sources = inputs.output_sources()
    assert sources[n_own : n_own + 4] == [frozenset([5])] * 4
    assert sources[n_own + 4] == frozenset([6])


def test_pruned_pipeline_lists_only_the_selected_columns():
    X, y = planted()
    support = np.array([True, True, False, False, True])
    by_name = pruned_pipeline(
        make_pipeline(named_preprocessing(), RandomForestRegressor(5)),
        support,
        X.columns,
    )
    by_name.fit(X.loc[:, support], y)
    assert [c for _, _, c in by_name[0].transformers] == [
        ["city", "noise_cat"],
        ["a"],
    ]
    by_position = make_column_transformer(
        (OneHotEncoder(), [1, 4]), (StandardScaler(), [0, 2, 3])
    )
    pruned = pruned_pipeline(
        make_pipeline(by_position, RandomForestRegressor(5)), support, X.columns
    )
    assert [c for _, _, c in pruned[0].transformers] == [[1, 2], [0]]
    pruned.fit(X.loc[:, support], y)


def test_selector_on_a_pipeline_rejects_planted_noise_and_refits_on_the_kept():
    # the case: a ColumnTransformer selecting its columns by name;
    # the selector kept every column, noise included, before its probes
    # reached the model. alpha=0.05, 10 rounds of 20-tree forests: corrected
    # p-values of 2e-6 at most for a, b and city (selector seeds 0-3, on the
    # newest versions and the floors'); the noise columns' p-values are
    # draws from the null (0.70 to 1 in those fits): the kept names say
    # they are above alpha, and nothing more is asserted of them
    X, y = planted()
    model = make_pipeline(
        named_preprocessing(), RandomForestRegressor(n_estimators=20, random_state=0)
    )
    selector = ImportanceSelector(model, alpha=0.05, random_state=0).fit(X, y)
    assert selector.get_feature_names_out().tolist() == ["a", "city", "b"]
    assert np.all(selector.pvalues_corrected_[[0, 1, 2]] < 1e-4)
    assert selector.predict(X).shape == (len(y),)
    assert selector.estimator_[0].transformers[0][2] == ["city"]


def test_probe_inputs_batch_probes_only_where_one_transform_serves_them():
    # the reference: one transform per probe, its original replaced by the
    # probe's values; batched transforms must give the same blocks, with
    # PCA mixing a and b (a probe of a and one of b cannot share a batch)
    from sklearn.decomposition import PCA

    X, y = planted()
    rng = np.random.RandomState(0)
    shadows = {
        f"probe_{i}_{name}": X[name].to_numpy()[rng.permutation(len(X))]
        for i, name in enumerate(["a", "b", "city", "noise", "noise_cat", "a"])
    }
    X_probed = X.assign(**shadows)
    originals = [0, 2, 1, 3, 4, 0]
    probes = [(np.array([5 + i]), np.array([o])) for i, o in enumerate(originals)]
    preprocessing = make_column_transformer(
        (OneHotEncoder(), ["city", "noise_cat"]),
        (PCA(1), ["a", "b"]),
        (StandardScaler(), ["noise"]),
    )
    inputs = ProbeInputs(preprocessing, 5, probes).fit(X_probed, y)
    assert len(inputs.waves_) < len(probes)
    fitted = inputs.preprocessing_
    own = X_probed.iloc[:, :5]
    expected = [np.asarray(fitted.transform(own))]
    for (columns, orig), block in zip(probes, inputs.blocks_):
        replaced = own.copy()
        replaced.isetitem(int(orig[0]), X_probed.iloc[:, int(columns[0])].to_numpy())
        expected.append(np.asarray(fitted.transform(replaced))[:, block])
    np.testing.assert_array_equal(inputs.transform(X_probed), np.hstack(expected))


def test_probe_inputs_fit_own_columns_as_the_pipeline_does():
    # TargetEncoder cross-fits in fit_transform: the model of each round
    # sees X's own columns encoded as the user's Pipeline encodes them in
    # its fit, not with the encoding of every row's own target
    from sklearn.preprocessing import TargetEncoder

    X, y = planted()
    X_probed = X.assign(probe_0_city=X.city.to_numpy()[::-1])
    # its folds are drawn from numpy's global generator (random_state,
    # deprecated in scikit-learn 1.9): seeded the same before both fits
    preprocessing = make_column_transformer((TargetEncoder(), ["city"]))
    inputs = ProbeInputs(preprocessing, 5, [(np.array([5]), np.array([1]))])
    np.random.seed(0)  # noqa: NPY002 (the global generator TargetEncoder draws from)
    Z = inputs.fit_transform(X_probed, y)
    np.random.seed(0)  # noqa: NPY002 (the global generator TargetEncoder draws from)
    cross_fitted = make_column_transformer((TargetEncoder(), ["city"])).fit_transform(
        X, y
    )
    np.testing.assert_allclose(Z[:, :1], cross_fitted)
    assert not np.allclose(Z[:, :1], inputs.preprocessing_.transform(X))


def _reference_blocks(inputs, X_probed, n_features):
    """The reference of ProbeInputs.transform: the own columns' transform,
    then one transform per probe, its original replaced by its values."""
    fitted = inputs.preprocessing_
    own = X_probed.iloc[:, :n_features]
    expected = [np.asarray(fitted.transform(own))]
    for (columns, orig), block in zip(inputs.probes, inputs.blocks_):
        replaced = own.copy()
        replaced.isetitem(int(orig[0]), X_probed.iloc[:, int(columns[0])].to_numpy())
        expected.append(np.asarray(fitted.transform(replaced))[:, block])
    return np.hstack(expected)


def _shadowed(X, names, seed=0):
    rng = np.random.RandomState(seed)
    shadows = {
        f"probe_{i}_{name}": X[name].to_numpy()[rng.permutation(len(X))]
        for i, name in enumerate(names)
    }
    originals = [list(X.columns).index(name) for name in names]
    n = X.shape[1]
    probes = [(np.array([n + i]), np.array([o])) for i, o in enumerate(originals)]
    return X.assign(**shadows), probes


@pytest.mark.parametrize("stacked_rows", [200_000, 600])
def test_probe_inputs_transform_batches_of_probes_as_one_where_rows_are_alone(
    stacked_rows, monkeypatch
):
    # three shadows of each column: three batches, whose tables are
    # transformed as one (their rows stacked) when the preprocessing
    # transforms each row on its own, as the encoder and the scaler do
    # (at most 600 rows at once: two tables stacked, then the third alone)
    from sklearn.preprocessing import FunctionTransformer

    from sklearn_fimp._selection._measuring import _pipeline_probes

    monkeypatch.setattr(_pipeline_probes, "STACKED_ROWS", stacked_rows)
    X, y = planted(n=300)
    X_probed, probes = _shadowed(X, list(X.columns) * 3)
    inputs = ProbeInputs(named_preprocessing(), 5, probes).fit(X_probed, y)
    assert len(inputs.waves_) == 3 and inputs.stacks_ is True
    np.testing.assert_array_equal(
        inputs.transform(X_probed), _reference_blocks(inputs, X_probed, 5)
    )
    # a step whose output for a row depends on the other rows (centred on
    # the rows it is given): stacked tables would change it, so each table
    # is transformed on its own
    centred = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["city", "noise_cat"]),
        (FunctionTransformer(lambda Z: Z - Z.mean(axis=0)), ["a", "b", "noise"]),
    )
    inputs = ProbeInputs(centred, 5, probes).fit(X_probed, y)
    assert inputs.stacks_ is False
    np.testing.assert_array_equal(
        inputs.transform(X_probed), _reference_blocks(inputs, X_probed, 5)
    )
