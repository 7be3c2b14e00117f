"""Refits on a subset of the columns of a Pipeline whose ColumnTransformer
lists its columns (drop-column importance, RecursiveImportanceSelector's
elimination and refit): the Pipeline is pruned to the columns it is given,
as ``_importance._pipeline.for_columns`` does, instead of failing on the
missing names."""

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer, make_column_transformer
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import r2_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_fimp import RecursiveImportanceSelector, drop_column_importance

pd = pytest.importorskip("pandas")

NUMERIC = ["a", "b", "noise"]
CATEGORICAL = ["c", "noise_cat"]


def frame(n=300, seed=0):
    """a, b and c carry the signal; noise and noise_cat are pure noise."""
    rng = np.random.RandomState(seed)
    X = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
            "c": rng.choice(["x", "y", "z"], n),
            "noise": rng.normal(size=n),
            "noise_cat": rng.choice(["p", "q"], n),
        }
    )
    y = 2 * X.a + X.b + 1.5 * (X.c == "x") + rng.normal(scale=0.3, size=n)
    return X, y.to_numpy()


def pipeline(categorical=CATEGORICAL, numeric=NUMERIC, trees=20):
    return make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), categorical),
            (StandardScaler(), numeric),
        ),
        RandomForestRegressor(n_estimators=trees, random_state=0),
    )


def test_drop_column_importance_of_a_pipeline_holds_the_column_constant():
    X, y = frame()
    train, test = np.arange(200), np.arange(200, 300)
    result = drop_column_importance(
        pipeline(), X, y, cv=[(train, test)], random_state=0
    )

    # the reference, by hand: the same Pipeline, with the dropped column held
    # at its first row's value (in its place, through the ColumnTransformer)
    def score_without(dropped):
        held = X.copy()
        if dropped is not None:
            held[dropped] = X[dropped].iloc[0]
        model = pipeline().fit(held.iloc[train], y[train])
        return r2_score(y[test], model.predict(held.iloc[test]))

    baseline = score_without(None)
    expected = [baseline - score_without(column) for column in X.columns]
    np.testing.assert_array_equal(result.importances[:, 0], expected)
    assert result.importances_mean[X.columns.get_loc("a")] > 0.5


@pytest.mark.parametrize("method", ["permutation", "drop_column"])
def test_recursive_selector_on_a_pipeline_listing_columns_by_name(method):
    X, y = frame()
    selector = RecursiveImportanceSelector(
        pipeline(trees=8), method=method, cv=3, random_state=0
    ).fit(X, y)
    kept = list(selector.get_feature_names_out())
    assert {"a", "b", "c"} <= set(kept)
    assert selector.ranking_[X.columns.get_loc("a")] == 1
    # the refit Pipeline's ColumnTransformer lists the kept columns only
    encoder = selector.estimator_[0]
    assert isinstance(encoder, ColumnTransformer)
    listed = {c for _, _, columns in encoder.transformers for c in columns}
    assert listed == set(kept)
    # and it predicts from them: the selector's predict drops the others
    np.testing.assert_array_equal(
        selector.predict(X), selector.estimator_.predict(X[kept])
    )
