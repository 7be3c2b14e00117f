import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import (
    BaggingClassifier,
    BaggingRegressor,
    ExtraTreesRegressor,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.metrics import (
    accuracy_score,
    get_scorer,
    make_scorer,
    mean_squared_error,
    r2_score,
)
from sklearn.neighbors import KNeighborsClassifier
from sklearn.tree import DecisionTreeRegressor
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.random import sample_without_replacement

from sklearn_fimp import oob_permutation_importance
from sklearn_fimp._engine import _budgets

from .conftest import as_frame, sklearn_permutations

MAX_SEED = np.iinfo(np.int32).max


def oob_masks(model, n_rows):
    masks = []
    for in_bag in model.estimators_samples_:
        mask = np.ones(n_rows, dtype=bool)
        mask[in_bag] = False
        masks.append(mask)
    return masks


def member_predict(model, t, X):
    """Member t's prediction on X (all columns), as the ensemble averages it."""
    member = model.estimators_[t]
    if hasattr(model, "estimators_features_"):
        X = X[:, model.estimators_features_[t]]
    X = X.astype(np.float32) if not hasattr(model, "estimators_features_") else X
    if hasattr(model, "classes_"):
        proba = np.zeros((X.shape[0], len(model.classes_)))
        proba[:, member.classes_.astype(int)] = member.predict_proba(X)
        return proba
    return member.predict(X)


def oob_score(model, X, y, scoring, sample_weight=None):
    """Out-of-bag score in a plain loop over members."""
    masks = oob_masks(model, len(y))
    total, count = 0.0, np.zeros(len(y))
    for t, mask in enumerate(masks):
        prediction = np.zeros((len(y),) + member_predict(model, t, X[:1]).shape[1:])
        prediction[mask] = member_predict(model, t, X[mask])
        total = total + prediction
        count += mask
    seen = count > 0
    average = total[seen] / count[seen].reshape((-1,) + (1,) * (total.ndim - 1))
    y_seen = y[seen]
    weight = None if sample_weight is None else sample_weight[seen]
    if hasattr(model, "classes_"):
        if scoring is None:
            predicted = model.classes_[average.argmax(axis=1)]
            return np.average(predicted == y_seen, weights=weight)
        return get_scorer(scoring)._score_func(
            y_seen,
            average[:, 1],
            **({} if weight is None else {"sample_weight": weight}),
        )
    residual = np.average((y_seen - average) ** 2, weights=weight)
    return 1 - residual / np.average(
        (y_seen - np.average(y_seen, weights=weight)) ** 2, weights=weight
    )


def forest_level_reference(
    model, X, y, groups, seed, n_repeats, scoring=None, sample_weight=None
):
    baseline = oob_score(model, X, y, scoring, sample_weight)
    drops = np.zeros((len(groups), n_repeats))
    for g, columns in enumerate(groups):
        for r, order in enumerate(sklearn_permutations(seed, len(y), n_repeats)):
            X_permuted = X.copy()
            X_permuted[:, columns] = X[order][:, columns]
            drops[g, r] = baseline - oob_score(
                model, X_permuted, y, scoring, sample_weight
            )
    return baseline, drops


def per_tree_reference(model, X, y, groups, seed, n_repeats):
    """Breiman's importance: permute within each member's out-of-bag rows."""
    seeds = np.random.RandomState(seed).randint(
        MAX_SEED + 1, size=len(model.estimators_)
    )
    drops = []
    for t, mask in enumerate(oob_masks(model, len(y))):
        rows = np.flatnonzero(mask)
        generator = np.random.RandomState(seeds[t])
        orders = [generator.permutation(len(rows)) for _ in range(n_repeats)]

        def tree_score(X_rows, t=t, rows=rows):
            prediction = member_predict(model, t, X_rows)
            if hasattr(model, "classes_"):
                return np.mean(model.classes_[prediction.argmax(axis=1)] == y[rows])
            residual = np.sum((y[rows] - prediction) ** 2)
            return 1 - residual / np.sum((y[rows] - y[rows].mean()) ** 2)

        base = tree_score(X[rows])
        tree_drops = np.zeros((len(groups), n_repeats))
        for g, columns in enumerate(groups):
            for r, order in enumerate(orders):
                X_rows = X[rows].copy()
                X_rows[:, columns] = X[rows][order][:, columns]
                tree_drops[g, r] = base - tree_score(X_rows)
        drops.append(tree_drops)
    return np.stack(drops)


def classification_data(n=300, classes=2):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(n, 4))
    score = X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, np.array(["low", "mid", "high"])[y] if classes == 3 else y


MODELS = {
    "rf_classifier": lambda: RandomForestClassifier(n_estimators=15, random_state=0),
    "rf_regressor": lambda: RandomForestRegressor(n_estimators=15, random_state=0),
    "et_regressor": lambda: ExtraTreesRegressor(
        n_estimators=15, bootstrap=True, random_state=0
    ),
    "bagging_regressor": lambda: BaggingRegressor(
        DecisionTreeRegressor(), n_estimators=15, max_features=0.5, random_state=0
    ),
    "bagging_classifier": lambda: BaggingClassifier(
        n_estimators=15, max_samples=0.5, random_state=0
    ),
    # not trees: the predict-every-row path
    "bagging_knn_classifier": lambda: BaggingClassifier(
        KNeighborsClassifier(), n_estimators=8, max_features=0.75, random_state=0
    ),
}


def data_for(name):
    X, y = classification_data(classes=3 if "bagging" in name else 2)
    if "regressor" in name:
        y = X[:, 0] + 0.5 * X[:, 1] ** 2
    return X, y


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize(
    "groups, expected",
    [(None, [[0], [1], [2], [3]]), ([[0, 1], [1, 3]], [[0, 1], [1, 3], [2]])],
)
def test_oob_permutation_forest_level_equals_reference_loop(name, groups, expected):
    X, y = data_for(name)
    model = MODELS[name]().fit(X, y)
    result = oob_permutation_importance(
        model, X, y, n_repeats=2, groups=groups, random_state=0
    )
    baseline, drops = forest_level_reference(
        model, X, y, expected, result.random_state, 2
    )
    assert result.baseline_score == pytest.approx(baseline, abs=1e-12)
    np.testing.assert_allclose(result.importances, drops, atol=1e-12)


@pytest.mark.parametrize("task_bytes", [1, None], ids=["one_task", "many_tasks"])
def test_oob_permutation_tied_votes_over_chunks_equal_reference_loop(
    task_bytes, monkeypatch
):
    # Leaves of two or more rows hold fractions such as 1/3, whose sums
    # depend on the order they are added in, and an even number of trees
    # makes out-of-bag votes tie: a permuted row whose votes tie is
    # recomputed in the model's order, for one task or many at once. The
    # rows span several chunks, so the score is summed chunk by chunk.
    X, y = classification_data(n=400)
    model = RandomForestClassifier(
        n_estimators=10, min_samples_leaf=2, oob_score=True, random_state=0
    )
    model.fit(X, y)
    assert np.any(model.oob_decision_function_[:, 0] == 0.5)
    monkeypatch.setattr(_budgets, "CHUNK_ROWS", 70)
    if task_bytes is not None:
        monkeypatch.setattr(_budgets, "TASK_BYTES", task_bytes)
    result = oob_permutation_importance(model, X, y, n_repeats=3, random_state=0)
    baseline, drops = forest_level_reference(
        model, X, y, [[0], [1], [2], [3]], result.random_state, 3
    )
    assert result.baseline_score == pytest.approx(baseline, abs=1e-12)
    np.testing.assert_allclose(result.importances, drops, atol=1e-12)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_oob_permutation_per_tree_equals_reference_loop(name):
    X, y = data_for(name)
    model = MODELS[name]().fit(X, y)
    result = oob_permutation_importance(
        model, X, y, per_tree=True, n_repeats=2, random_state=0
    )
    drops = per_tree_reference(
        model, X, y, [[0], [1], [2], [3]], result.random_state, 2
    )
    np.testing.assert_allclose(result.importances, drops.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(
        result.tree_importances, drops.mean(axis=2).T, atol=1e-12
    )
    scaled = oob_permutation_importance(
        model, X, y, per_tree=True, scale=True, n_repeats=2, random_state=0
    )
    standard_error = drops.std(axis=0, ddof=1) / np.sqrt(len(drops))
    expected_z = np.divide(
        drops.mean(axis=0),
        standard_error,
        out=np.zeros_like(standard_error),
        where=standard_error > 0,
    )
    np.testing.assert_allclose(scaled.importances, expected_z, atol=1e-9)


def test_oob_permutation_weighted_custom_scorer_equals_reference():
    X, y = classification_data()
    weight = np.random.RandomState(2).uniform(0.5, 2, size=len(y))
    model = RandomForestClassifier(n_estimators=15, random_state=0).fit(X, y)
    result = oob_permutation_importance(
        model, X, y, scoring="roc_auc", sample_weight=weight, random_state=0
    )
    baseline, drops = forest_level_reference(
        model, X, y, [[0], [1], [2], [3]], result.random_state, 1, "roc_auc", weight
    )
    assert result.baseline_score == pytest.approx(baseline, abs=1e-12)
    np.testing.assert_allclose(result.importances, drops, atol=1e-12)


@pytest.mark.parametrize(
    "model",
    [
        RandomForestClassifier(n_estimators=40, oob_score=True, random_state=0),
        RandomForestRegressor(n_estimators=40, oob_score=True, random_state=0),
    ],
)
def test_oob_permutation_baseline_is_models_oob_score(model):
    X, y = classification_data()
    model.fit(X, y)
    result = oob_permutation_importance(model, X, y, random_state=0)
    assert result.baseline_score == pytest.approx(model.oob_score_, abs=1e-12)


def test_oob_permutation_per_tree_zero_for_unused_feature():
    # Stumps split on one feature each: PI_t(j) = 0 exactly for the others.
    X, y = classification_data()
    model = RandomForestClassifier(
        n_estimators=20, max_depth=1, max_features=1, random_state=0
    ).fit(X, y)
    result = oob_permutation_importance(model, X, y, per_tree=True, random_state=0)
    for t, tree in enumerate(model.estimators_):
        unused = np.setdiff1d(np.arange(4), tree.tree_.feature[0])
        assert np.all(result.tree_importances[unused, t] == 0)


def test_oob_permutation_ranks_random_column_last(noisy_regression):
    X, y = noisy_regression
    model = RandomForestRegressor(n_estimators=30, random_state=0).fit(X, y)
    for per_tree in (False, True):
        result = oob_permutation_importance(
            model, X, y, per_tree=per_tree, n_repeats=3, random_state=0
        )
        assert list(np.argsort(-result.importances_mean)) == [0, 1, 2]
        assert abs(result.importances_mean[2]) < 0.02


@pytest.mark.parametrize("per_tree", [False, True])
def test_oob_permutation_same_seed_same_result_whatever_n_jobs(per_tree):
    X, y = classification_data()
    model = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    one = oob_permutation_importance(
        model, X, y, per_tree=per_tree, n_jobs=1, random_state=0
    )
    two = oob_permutation_importance(
        model, X, y, per_tree=per_tree, n_jobs=2, random_state=0
    )
    np.testing.assert_array_equal(one.importances, two.importances)


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_oob_permutation_dataframe_matches_numpy(kind):
    X, y = classification_data()
    frame = as_frame(X, kind)
    from_frame = RandomForestClassifier(n_estimators=10, random_state=0).fit(frame, y)
    from_array = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    a = oob_permutation_importance(from_frame, frame, y, random_state=0)
    b = oob_permutation_importance(from_array, X, y, random_state=0)
    np.testing.assert_array_equal(a.importances, b.importances)
    assert list(a.feature_names) == ["f0", "f1", "f2", "f3"]


@pytest.mark.parametrize(
    "model, kwargs, match",
    [
        (GradientBoostingRegressor(n_estimators=5), {}, "GradientBoostingRegressor"),
        (
            GradientBoostingRegressor(n_estimators=5),
            {"per_tree": True},
            "permutation_importance on a validation set",
        ),
        (RandomForestRegressor(n_estimators=5, bootstrap=False), {}, "bootstrap=True"),
        (RandomForestRegressor(n_estimators=5), {"scale": True}, "per_tree=True"),
    ],
)
def test_oob_permutation_without_oob_rows_says_what_to_do(model, kwargs, match):
    X, y = data_for("rf_regressor")
    model.fit(X, y)
    with pytest.raises(ValueError, match=match):
        oob_permutation_importance(model, X, y, **kwargs)


def test_oob_permutation_needs_the_training_rows():
    X, y = data_for("rf_regressor")
    model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="fitted on 300"):
        oob_permutation_importance(model, X[:200], y[:200])
    with pytest.raises(InvalidParameterError, match="n_repeats"):
        oob_permutation_importance(model, X, y, n_repeats=0)


@pytest.mark.parametrize(
    "name, scoring, scorer",
    [
        ("rf_classifier", "accuracy", make_scorer(accuracy_score)),
        ("bagging_classifier", None, make_scorer(accuracy_score)),
        ("rf_regressor", "r2", make_scorer(r2_score)),
        (
            "et_regressor",
            "neg_mean_squared_error",
            make_scorer(mean_squared_error, greater_is_better=False),
        ),
    ],
)
def test_oob_permutation_per_tree_score_shortcut_equals_scorer(name, scoring, scorer):
    # accuracy, R² and MSE are updated from the re-routed rows alone; any
    # other callable goes through the scorer: both must agree.
    X, y = data_for(name)
    model = MODELS[name]().fit(X, y)
    weight = np.random.RandomState(0).uniform(0, 2, size=len(y))
    kwargs = dict(per_tree=True, n_repeats=2, sample_weight=weight, random_state=0)
    shortcut = oob_permutation_importance(model, X, y, scoring=scoring, **kwargs)
    scored = oob_permutation_importance(model, X, y, scoring=scorer, **kwargs)
    np.testing.assert_allclose(shortcut.importances, scored.importances, atol=1e-12)
    np.testing.assert_allclose(
        shortcut.tree_importances, scored.tree_importances, atol=1e-12
    )


@pytest.mark.parametrize("per_tree", [False, True])
def test_oob_permutation_recorded_seed_reproduces_the_result(per_tree):
    X, y = classification_data()
    model = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    first = oob_permutation_importance(
        model, X, y, per_tree=per_tree, random_state=np.random.RandomState(5)
    )
    again = oob_permutation_importance(
        model, X, y, per_tree=per_tree, random_state=first.random_state
    )
    np.testing.assert_array_equal(first.importances, again.importances)


def subsample_and_permutations(seed, n_rows, n_kept, n_repeats):
    """Rows kept by ``max_samples`` (sorted) and the permutations of their
    positions, drawn as scikit-learn's permutation_importance draws them:
    the row sample first, then one shuffle per repeat, composed."""
    generator = np.random.RandomState(np.random.RandomState(seed).randint(MAX_SEED + 1))
    rows = np.sort(sample_without_replacement(n_rows, n_kept, random_state=generator))
    shuffle, composed, orders = np.arange(n_kept), np.arange(n_kept), []
    for _ in range(n_repeats):
        generator.shuffle(shuffle)
        composed = composed[shuffle]
        orders.append(composed)
    return rows, orders


@pytest.mark.parametrize(
    "name", ["rf_classifier", "rf_regressor", "bagging_knn_classifier"]
)
@pytest.mark.parametrize("max_samples", [120, 0.4])
def test_oob_permutation_max_samples_equals_reference_on_the_sample(name, max_samples):
    """With ``max_samples``, rows are drawn once; each drawn row is scored by
    the members it is out of bag for, and permutations shuffle the drawn
    rows only."""
    X, y = data_for(name)
    model = MODELS[name]().fit(X, y)
    result = oob_permutation_importance(
        model, X, y, n_repeats=2, max_samples=max_samples, random_state=3
    )
    rows, orders = subsample_and_permutations(3, len(y), 120, 2)
    masks = [mask[rows] for mask in oob_masks(model, len(y))]
    X_rows, y_rows = X[rows], y[rows]

    def score(X_scored):
        total, count = 0.0, np.zeros(len(rows))
        for t, mask in enumerate(masks):
            prediction = np.zeros(
                (len(rows),) + member_predict(model, t, X[:1]).shape[1:]
            )
            prediction[mask] = member_predict(model, t, X_scored[mask])
            total, count = total + prediction, count + mask
        seen = count > 0
        average = total[seen] / count[seen].reshape((-1,) + (1,) * (total.ndim - 1))
        if hasattr(model, "classes_"):
            return np.mean(model.classes_[average.argmax(axis=1)] == y_rows[seen])
        residual = np.sum((y_rows[seen] - average) ** 2)
        return 1 - residual / np.sum((y_rows[seen] - y_rows[seen].mean()) ** 2)

    baseline = score(X_rows)
    assert result.baseline_score == pytest.approx(baseline, abs=1e-12)
    for j in range(X.shape[1]):
        for r, order in enumerate(orders):
            X_permuted = X_rows.copy()
            X_permuted[:, j] = X_rows[order, j]
            assert result.importances[j, r] == pytest.approx(
                baseline - score(X_permuted), abs=1e-12
            )
    assert result.max_samples == max_samples


@pytest.mark.parametrize("per_tree", [False, True])
def test_oob_permutation_max_samples_of_all_rows_changes_nothing(per_tree):
    X, y = data_for("rf_regressor")
    model = MODELS["rf_regressor"]().fit(X, y)
    full = oob_permutation_importance(model, X, y, per_tree=per_tree, random_state=0)
    for max_samples in (len(y), 1.0):
        same = oob_permutation_importance(
            model, X, y, per_tree=per_tree, max_samples=max_samples, random_state=0
        )
        np.testing.assert_array_equal(same.importances, full.importances)


def test_oob_permutation_max_samples_per_tree_uses_sampled_oob_rows_only():
    X, y = data_for("rf_classifier")
    model = MODELS["rf_classifier"]().fit(X, y)
    sampled = oob_permutation_importance(
        model, X, y, per_tree=True, max_samples=100, random_state=0
    )
    full = oob_permutation_importance(model, X, y, per_tree=True, random_state=0)
    assert sampled.importances.shape == full.importances.shape
    assert not np.array_equal(sampled.importances, full.importances)
    # the informative columns still come first
    assert set(np.argsort(-sampled.importances_mean)[:2]) == {0, 1}


def test_oob_permutation_max_samples_errors_name_the_parameter():
    X, y = data_for("rf_regressor")
    model = MODELS["rf_regressor"]().fit(X, y)
    with pytest.raises(ValueError, match=r"max_samples=1000 is larger than the 300"):
        oob_permutation_importance(model, X, y, max_samples=1000)
    with pytest.raises(InvalidParameterError, match="max_samples"):
        oob_permutation_importance(model, X, y, max_samples=0)


@pytest.mark.parametrize(
    "model",
    [
        RandomForestClassifier(n_estimators=4, random_state=0),
        ExtraTreesRegressor(n_estimators=4, bootstrap=True, random_state=0),
        RandomForestRegressor(n_estimators=4, max_samples=0.3, random_state=0),
        BaggingRegressor(
            DecisionTreeRegressor(),
            n_estimators=4,
            max_samples=0.5,
            max_features=0.5,
            bootstrap_features=True,
            random_state=0,
        ),
    ],
)
def test_members_are_generated_one_at_a_time_as_estimators_samples_(model):
    # the members' rows come from the ensemble's per-member generator, not
    # from estimators_samples_ (every member's rows at once); they must be
    # the same rows
    from sklearn_fimp._importance._bagging import bagged_members, in_bag_rows

    X = np.random.RandomState(0).normal(size=(60, 4))
    y = (X[:, 0] > 0).astype(int) if hasattr(model, "predict_proba") else X[:, 0]
    model.fit(X, y)
    expected = model.estimators_samples_
    for drawn, reference in zip(in_bag_rows(model), expected, strict=True):
        np.testing.assert_array_equal(drawn, reference)
    members = bagged_members(model, len(y))
    kept = bagged_members(model, len(y), keep_in_bag=True)
    for member, with_in_bag, mask, in_bag in zip(
        members, kept, oob_masks(model, len(y)), expected, strict=True
    ):
        assert member.in_bag_rows is None
        np.testing.assert_array_equal(with_in_bag.in_bag_rows, in_bag)
        np.testing.assert_array_equal(member.oob_rows, np.flatnonzero(mask))
        assert member.oob_rows.dtype == np.int32


@pytest.mark.parametrize(
    "options",
    [{}, {"per_tree": True}, {"per_tree": True, "scale": True}],
    ids=["forest", "per_tree", "scaled"],
)
def test_oob_permutation_importance_multimetric_equals_one_call_per_metric(options):
    X, y = make_classification(n_samples=200, n_features=4, random_state=0)
    model = RandomForestClassifier(n_estimators=15, random_state=0).fit(X, y)
    scoring = ["accuracy", "roc_auc"]
    results = oob_permutation_importance(
        model, X, y, scoring=scoring, n_repeats=2, random_state=0, **options
    )
    assert list(results) == scoring
    for name, result in results.items():
        alone = oob_permutation_importance(
            model, X, y, scoring=name, n_repeats=2, random_state=0, **options
        )
        assert result.scoring == name
        assert result.baseline_score == alone.baseline_score
        np.testing.assert_array_equal(result.importances, alone.importances)
        if options:
            np.testing.assert_array_equal(
                result.tree_importances, alone.tree_importances
            )
