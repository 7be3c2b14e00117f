import numpy as np
import pytest
from scipy import stats
from sklearn.compose import make_column_transformer
from sklearn.ensemble import (
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression, LogisticRegression, RidgeCV
from sklearn.metrics import get_scorer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_fimp import (
    ImportanceSelector,
    conditional_permutation_importance,
    permutation_importance,
)
from sklearn_fimp._importance._conditional import (
    SAMPLER_MAX_ROWS_PER_TREE,
    SAMPLER_MIN_SAMPLES_LEAF,
    SAMPLER_N_ESTIMATORS,
    SAMPLER_OOB_TREES,
    conditional_draw_seeds,
    fit_column_sampler,
    loss_pvalues,
    sampler_n_estimators,
)
from sklearn_fimp._utils._random import MAX_SEED

from ._engine_cases import CLASSIFIERS, REGRESSORS
from .conftest import as_frame


def reference_conditional(
    estimator, X, y, groups, seed, n_repeats, sampler, categorical, scoring=None
):
    """Fit each column's sampler, replace the column, predict every row and
    score, in a plain loop (numpy X of floats; ``categorical`` says which
    columns get a classifier). Returns the importances and the p-values of
    a one-sided one-sample t-test of the per-row loss differences."""
    scorer = get_scorer(scoring) if scoring else (lambda e, X, y: e.score(X, y))
    classifier = hasattr(estimator, "predict_proba")

    def losses(X_):
        if classifier:
            truth = (y[:, None] == estimator.classes_[None, :]).astype(float)
            return ((estimator.predict_proba(X_) - truth) ** 2).sum(axis=1)
        return (estimator.predict(X_) - y) ** 2

    n = X.shape[0]
    permutations, uniforms, sampler_seed = conditional_draw_seeds(seed, n, n_repeats, n)
    group_seeds = np.random.RandomState(sampler_seed).randint(
        MAX_SEED + 1, size=len(groups)
    )
    baseline, baseline_losses = scorer(estimator, X, y), losses(X)
    drops = np.zeros((len(groups), n_repeats))
    pvalues = np.zeros(len(groups))
    for g, columns in enumerate(groups):
        others = [c for c in range(X.shape[1]) if c not in columns]
        inputs = X[:, others]
        if sampler == "linear":
            inputs = (inputs - inputs.mean(axis=0)) / inputs.std(axis=0)
        column_seeds = np.random.RandomState(group_seeds[g]).randint(
            MAX_SEED + 1, size=len(columns)
        )
        draws = []
        for c, column_seed in zip(columns, column_seeds):
            if categorical[c]:
                values, target = np.unique(X[:, c], return_inverse=True)
                if sampler == "linear":
                    proba = (
                        LogisticRegression(max_iter=1000)
                        .fit(inputs, target)
                        .predict_proba(inputs)
                    )
                else:
                    proba = (
                        RandomForestClassifier(
                            n_estimators=sampler_n_estimators(n),
                            min_samples_leaf=SAMPLER_MIN_SAMPLES_LEAF,
                            max_features=1.0,
                            max_samples=min(n, SAMPLER_MAX_ROWS_PER_TREE),
                            oob_score=True,
                            random_state=int(column_seed),
                        )
                        .fit(inputs, target)
                        .oob_decision_function_
                    )
                indicators = (target[:, None] == np.arange(len(values))).astype(float)
                frequencies = indicators.mean(axis=0)
                skill = 1 - np.sum((indicators - proba) ** 2) / np.sum(
                    (indicators - frequencies) ** 2
                )
                if skill <= 0:
                    draws.append([X[p, c] for p in permutations])
                    continue
                if sampler == "forest":
                    # shrink towards the frequencies by the least-squares slope
                    towards = proba - frequencies
                    slope = np.sum(towards * (indicators - frequencies)) / np.sum(
                        towards**2
                    )
                    proba = frequencies + min(max(slope, 0), 1) * towards
                draws.append(
                    [
                        values[
                            [
                                np.searchsorted(np.cumsum(p)[:-1], u, side="right")
                                for p, u in zip(proba, uniforms[r])
                            ]
                        ]
                        for r in range(n_repeats)
                    ]
                )
                continue
            if sampler == "linear":
                model = RidgeCV(alphas=np.logspace(-3, 3, 13)).fit(inputs, X[:, c])
                mean, r2 = model.predict(inputs), model.score(inputs, X[:, c])
            else:
                model = RandomForestRegressor(
                    n_estimators=sampler_n_estimators(n),
                    min_samples_leaf=SAMPLER_MIN_SAMPLES_LEAF,
                    max_features=1.0,
                    max_samples=min(n, SAMPLER_MAX_ROWS_PER_TREE),
                    oob_score=True,
                    random_state=int(column_seed),
                ).fit(inputs, X[:, c])
                mean, r2 = model.oob_prediction_, model.oob_score_
            if r2 <= 0:
                draws.append([X[p, c] for p in permutations])
                continue
            if sampler == "forest":
                # the least-squares line of the column on its prediction
                slope = np.polyfit(mean, X[:, c], 1)[0]
                mean = X[:, c].mean() + max(slope, 0) * (mean - mean.mean())
            residuals = X[:, c] - mean
            draws.append([mean + residuals[p] for p in permutations])
        row_differences = np.zeros(n)
        for r in range(n_repeats):
            X_replaced = X.copy()
            for c, column_draws in zip(columns, draws):
                X_replaced[:, c] = column_draws[r]
            drops[g, r] = baseline - scorer(estimator, X_replaced, y)
            row_differences += (losses(X_replaced) - baseline_losses) / n_repeats
        pvalues[g] = stats.ttest_1samp(row_differences, 0, alternative="greater").pvalue
    return drops, pvalues


@pytest.mark.parametrize("n_rows", [2, 300, 2000, 5000, 20000, 200000])
def test_conditional_forest_sampler_leaves_each_row_out_of_about_17_trees(n_rows):
    # expected out-of-bag trees of a row: trees x (1 - 1/n)^(rows per tree);
    # the fewest trees that give at least 17, at most 50
    from sklearn_fimp._importance._conditional import _sampler_model

    n_trees = sampler_n_estimators(n_rows)
    out_of_bag = (1 - 1 / n_rows) ** min(n_rows, SAMPLER_MAX_ROWS_PER_TREE)
    assert n_trees <= SAMPLER_N_ESTIMATORS
    assert n_trees * out_of_bag >= SAMPLER_OOB_TREES or (
        n_trees == SAMPLER_N_ESTIMATORS
    )
    assert (n_trees - 1) * out_of_bag < SAMPLER_OOB_TREES
    model = _sampler_model("forest", "regression", 0, n_rows, 1)
    assert model.n_estimators == n_trees and model.oob_score


def test_conditional_forest_sampler_sizes_in_the_docstring():
    assert sampler_n_estimators(2000) == 47
    assert sampler_n_estimators(20000) == 19


def correlated_regression(n=400, seed=0):
    """x0 causes y; x1 is a noisy copy of x0 that y does not use; x2 is a
    second cause independent of the rest; x3 is few-valued noise."""
    rng = np.random.RandomState(seed)
    cause = rng.normal(size=n)
    X = np.column_stack(
        [
            cause,
            cause + rng.normal(scale=0.4, size=n),
            rng.normal(size=n),
            rng.randint(0, 3, size=n).astype(float),
        ]
    )
    y = cause + X[:, 2] + rng.normal(scale=0.5, size=n)
    return X, y


SINGLE_COLUMNS = [[0], [1], [2], [3]]


def assert_matches_reference(
    model,
    X,
    y,
    *,
    random_state,
    n_repeats,
    sampler,
    groups=None,
    expected_groups=SINGLE_COLUMNS,
    scoring=None,
):
    """conditional_permutation_importance equals the slow reference loop, run
    on ``expected_groups`` of ``correlated_regression``'s columns (x3
    categorical); returns the result."""
    result = conditional_permutation_importance(
        model,
        X,
        y,
        n_repeats=n_repeats,
        groups=groups,
        sampler=sampler,
        scoring=scoring,
        random_state=random_state,
    )
    drops, pvalues = reference_conditional(
        model,
        X,
        y,
        expected_groups,
        random_state,
        n_repeats,
        sampler,
        categorical=[False, False, False, True],
        scoring=scoring,
    )
    np.testing.assert_allclose(result.importances, drops, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(result.pvalues, pvalues, rtol=1e-8, atol=1e-12)
    return result


@pytest.mark.parametrize("sampler", ["forest", "linear"])
@pytest.mark.parametrize("groups", [None, [[0, 1], 2, 3]])
def test_conditional_equals_reference_loop_regression(sampler, groups):
    X, y = correlated_regression()
    model = RandomForestRegressor(n_estimators=20, random_state=0).fit(X[:200], y[:200])
    result = assert_matches_reference(
        model,
        X[200:],
        y[200:],
        random_state=7,
        n_repeats=3,
        sampler=sampler,
        groups=groups,
        expected_groups=SINGLE_COLUMNS if groups is None else [[0, 1], [2], [3]],
    )
    assert result.method == "conditional_permutation"
    assert result.random_state == 7


@pytest.mark.parametrize("sampler", ["forest", "linear"])
@pytest.mark.parametrize("scoring", [None, "roc_auc"])
def test_conditional_equals_reference_loop_classification(sampler, scoring):
    X, target = correlated_regression(seed=1)
    y = (target > 0).astype(int)
    model = RandomForestClassifier(n_estimators=20, random_state=0).fit(
        X[:200], y[:200]
    )
    assert_matches_reference(
        model,
        X[200:],
        y[200:],
        random_state=3,
        n_repeats=2,
        sampler=sampler,
        scoring=scoring,
    )


@pytest.mark.parametrize("sampler", ["forest", "linear"])
def test_conditional_equals_reference_loop_predictable_few_valued_column(sampler):
    # x3 is x0 cut into three levels: its classifier predicts it, and the
    # forest sampler's probabilities are shrunk towards the frequencies
    X, y = correlated_regression(seed=2)
    X[:, 3] = np.digitize(X[:, 0] + 0.3 * X[:, 2], [-0.5, 0.5])
    model = RandomForestRegressor(n_estimators=20, random_state=0).fit(X[:200], y[:200])
    result = assert_matches_reference(
        model, X[200:], y[200:], random_state=5, n_repeats=2, sampler=sampler
    )
    assert result.sampler_scores[3][0] > 0.5


def _count_engine_calls(monkeypatch):
    """Groups the conditional core hands to the tree engine."""
    from sklearn_fimp._importance import _conditional

    calls = []
    engine = _conditional.replaced_scorer_outputs

    def counted(ensemble, X, groups, *args, **kwargs):
        calls.append(len(groups))
        return engine(ensemble, X, groups, *args, **kwargs)

    monkeypatch.setattr(_conditional, "replaced_scorer_outputs", counted)
    return calls


@pytest.mark.usefixtures("reroute_every_group")
@pytest.mark.parametrize(
    "family, task",
    [
        (family, task)
        for task, models in (
            ("regression", REGRESSORS),
            ("classification", CLASSIFIERS),
        )
        for family in sorted(models)
    ],
)
def test_conditional_tree_engine_equals_reference_loop(
    engine_backend, family, task, monkeypatch
):
    # Every family the tree engine serves: the engine's scores and p-values
    # are those of the slow reference (same draws; replace the column,
    # predict every row, score), for single columns and a group.
    from sklearn.base import clone

    X, target = correlated_regression(seed=2)
    y = target if task == "regression" else (target > 0).astype(int)
    models = REGRESSORS if task == "regression" else CLASSIFIERS
    model = clone(models[family]).fit(X[:200], y[:200])
    calls = _count_engine_calls(monkeypatch)
    groups = [[0, 1], 2, 3]
    result = conditional_permutation_importance(
        model, X[200:], y[200:], n_repeats=2, groups=groups, random_state=5
    )
    assert calls == [3]
    drops, pvalues = reference_conditional(
        model,
        X[200:],
        y[200:],
        [[0, 1], [2], [3]],
        5,
        2,
        "forest",
        categorical=[False, False, False, True],
    )
    # a group no draw moves (a tree that never splits on it) changes no
    # row's loss: p = 1, where the reference's t-test of zeros gives nan
    pvalues = np.where(np.isnan(pvalues), 1.0, pvalues)
    np.testing.assert_allclose(result.importances, drops, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(result.pvalues, pvalues, rtol=1e-8, atol=1e-12)


def _booster(library, task):
    """A small XGBoost, LightGBM or CatBoost model (skipped when the library
    is not installed)."""
    module = pytest.importorskip(library)
    if library == "xgboost":
        kind = module.XGBRegressor if task == "regression" else module.XGBClassifier
        return kind(n_estimators=20, max_depth=3, n_jobs=1, random_state=0)
    if library == "lightgbm":
        kind = module.LGBMRegressor if task == "regression" else module.LGBMClassifier
        return kind(n_estimators=20, num_leaves=8, n_jobs=1, random_state=0, verbose=-1)
    kind = (
        module.CatBoostRegressor if task == "regression" else module.CatBoostClassifier
    )
    return kind(iterations=20, depth=3, thread_count=1, random_seed=0, verbose=0)


@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.parametrize("library", ["xgboost", "lightgbm", "catboost"])
def test_conditional_boosting_libraries_on_the_engine_equal_reference_loop(
    library, task, monkeypatch
):
    # The boosting libraries' adapters serve the draws too. XGBoost sums in
    # float32 and the engine in float64: agreement to float32 precision.
    X, target = correlated_regression(seed=4)
    y = target if task == "regression" else (target > 0).astype(int)
    model = _booster(library, task).fit(X[:200], y[:200])
    calls = _count_engine_calls(monkeypatch)
    result = conditional_permutation_importance(
        model, X[200:], y[200:], n_repeats=2, random_state=6
    )
    assert calls == [4]
    drops, pvalues = reference_conditional(
        model,
        X[200:],
        y[200:],
        [[0], [1], [2], [3]],
        6,
        2,
        "forest",
        categorical=[False, False, False, True],
    )
    pvalues = np.where(np.isnan(pvalues), 1.0, pvalues)
    atol, rtol = (1e-6, 1e-4) if library == "xgboost" else (1e-12, 1e-8)
    np.testing.assert_allclose(result.importances, drops, atol=atol)
    np.testing.assert_allclose(result.pvalues, pvalues, rtol=rtol, atol=1e-12)


def test_conditional_engine_and_generic_path_agree(monkeypatch):
    # A Pipeline takes the predict-every-row path; the same forest alone
    # takes the engine; same draws, same results.
    X, y = correlated_regression()
    model = RandomForestRegressor(n_estimators=20, random_state=0).fit(X[:200], y[:200])
    calls = _count_engine_calls(monkeypatch)
    fast = conditional_permutation_importance(
        model, X[200:], y[200:], n_repeats=3, random_state=1
    )
    slow = conditional_permutation_importance(
        make_pipeline(model), X[200:], y[200:], n_repeats=3, random_state=1
    )
    assert calls == [4]
    np.testing.assert_allclose(fast.importances, slow.importances, atol=1e-12)
    np.testing.assert_allclose(fast.pvalues, slow.pvalues, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_conditional_frames_equal_numpy(kind):
    X, y = correlated_regression()
    model = RandomForestRegressor(n_estimators=20, random_state=0).fit(X[:200], y[:200])
    expected = conditional_permutation_importance(
        model, X[200:], y[200:], n_repeats=2, random_state=0
    )
    frame = as_frame(X, kind)
    framed_model = RandomForestRegressor(n_estimators=20, random_state=0).fit(
        frame[:200], y[:200]
    )
    result = conditional_permutation_importance(
        framed_model, frame[200:], y[200:], n_repeats=2, random_state=0
    )
    np.testing.assert_allclose(result.importances, expected.importances)
    np.testing.assert_allclose(result.pvalues, expected.pvalues)
    assert list(result.feature_names) == ["f0", "f1", "f2", "f3"]


def test_conditional_duplicated_column_is_about_zero():
    # drop-column's answer: either copy can go at no cost; ordinary
    # permutation importance splits the credit between the copies
    rng = np.random.RandomState(0)
    n = 1000
    cause = rng.normal(size=n)
    X = np.column_stack([cause, cause, rng.normal(size=n)])
    y = cause + 0.5 * X[:, 2] + rng.normal(scale=0.3, size=n)
    model = RandomForestRegressor(n_estimators=30, random_state=0).fit(X[:500], y[:500])
    conditional = conditional_permutation_importance(
        model, X[500:], y[500:], random_state=0
    )
    ordinary = permutation_importance(model, X[500:], y[500:], random_state=0)
    assert np.all(np.abs(conditional.importances_mean[:2]) < 0.02)
    assert np.all(ordinary.importances_mean[:2] > 0.2)
    assert np.all(conditional.pvalues[:2] > 0.01)
    assert conditional.importances_mean[2] > 0.1
    assert conditional.pvalues[2] < 1e-6


def test_conditional_credits_the_cause_not_the_stand_in():
    rng = np.random.RandomState(0)
    n = 1000
    cause = rng.normal(size=n)
    X = np.column_stack([cause, cause + rng.normal(scale=0.3, size=n)])
    y = cause + rng.normal(scale=0.3, size=n)
    model = RandomForestRegressor(n_estimators=30, max_features=1, random_state=0).fit(
        X[:500], y[:500]
    )
    conditional = conditional_permutation_importance(
        model, X[500:], y[500:], random_state=0
    )
    ordinary = permutation_importance(model, X[500:], y[500:], random_state=0)
    # the model splits on both; ordinary permutation credits both
    assert ordinary.importances_mean[1] > 0.1
    assert abs(conditional.importances_mean[1]) < 0.02
    assert conditional.pvalues[1] > 0.01
    assert conditional.importances_mean[0] > conditional.importances_mean[1] + 0.1
    assert conditional.pvalues[0] < 1e-6


def test_conditional_equals_ordinary_for_independent_features():
    rng = np.random.RandomState(0)
    n = 1000
    X = rng.normal(size=(n, 3))
    y = X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.3, size=n)
    model = RandomForestRegressor(n_estimators=30, random_state=0).fit(X[:500], y[:500])
    conditional = conditional_permutation_importance(
        model, X[500:], y[500:], n_repeats=10, random_state=0
    )
    ordinary = permutation_importance(
        model, X[500:], y[500:], n_repeats=10, random_state=0
    )
    # about 0.05 is the repeat-to-repeat spread of the larger importance
    np.testing.assert_allclose(
        conditional.importances_mean, ordinary.importances_mean, atol=0.05
    )


def _noise_pvalues(n_datasets, n_rows, seed):
    """p-values of a noise feature correlated with a cause of y (rho=0.7)
    and of one independent of everything, for a linear model."""
    rng = np.random.RandomState(seed)
    pvalues = []
    for _ in range(n_datasets):
        cause = rng.normal(size=2 * n_rows)
        X = np.column_stack(
            [
                cause,
                0.7 * cause + np.sqrt(1 - 0.49) * rng.normal(size=2 * n_rows),
                rng.normal(size=2 * n_rows),
            ]
        )
        y = cause + rng.normal(size=2 * n_rows)
        model = LinearRegression().fit(X[:n_rows], y[:n_rows])
        result = conditional_permutation_importance(
            model,
            X[n_rows:],
            y[n_rows:],
            sampler="linear",
            n_repeats=3,
            random_state=rng.randint(MAX_SEED),
        )
        pvalues.append(result.pvalues)
    return np.array(pvalues)


def test_conditional_pvalues_valid_on_noise_features():
    # For a valid p-value, the count of p <= 0.05 among 200 data sets is
    # Binomial(200, 0.05) or below: P(count > 22) < 1e-3. Measured: 11 and
    # 9; the same t-test with ordinary permutation draws gives 33 for the
    # correlated noise feature, and fails.
    pvalues = _noise_pvalues(200, 200, seed=0)
    assert np.all(pvalues[:, 0] < 1e-3)  # the cause
    assert np.sum(pvalues[:, 1] <= 0.05) <= 22
    assert np.sum(pvalues[:, 2] <= 0.05) <= 22


def _forest_draws(X, column, kind, n_draws=50):
    """Draws of one column of ``X`` by the forest sampler fitted on the
    other columns."""
    others = np.delete(X, column, axis=1)
    sampler = fit_column_sampler(
        X, X[:, column], others, column, kind, "forest", seed=0, n_jobs=1
    )
    rng = np.random.RandomState(1)
    n = X.shape[0]
    return [
        sampler.draw(rng.permutation(n), rng.random_sample(n)) for _ in range(n_draws)
    ]


def test_conditional_forest_draws_have_the_columns_variance():
    # prediction + permuted residual had 1.079 times the variance of this
    # stand-in (the forest's noise counted twice: the code before the
    # least-squares line fails); along the line, 1 up to the permutation's
    # cross term
    rng = np.random.RandomState(0)
    cause, noise = rng.normal(size=(2, 300))
    stand_in = 0.7 * cause + np.sqrt(1 - 0.7**2) * rng.normal(size=300)
    X = np.column_stack([cause, stand_in, noise])
    draws = _forest_draws(X, 1, "regression")
    ratio = np.mean([np.var(d) for d in draws]) / np.var(stand_in)
    assert abs(ratio - 1) < 0.03


def test_conditional_forest_draws_unpredictable_levels_by_permutation():
    # an uninformative forest's out-of-bag probabilities vary from row to
    # row; a column the others do not predict is drawn from its marginal
    rng = np.random.RandomState(0)
    X = np.column_stack([rng.normal(size=(300, 3)), rng.randint(0, 3, size=300)])
    for draw in _forest_draws(X.astype(float), 3, "classification", n_draws=5):
        np.testing.assert_array_equal(np.sort(draw), np.sort(X[:, 3]))


def test_conditional_selector_method():
    X, y = correlated_regression(n=400)
    # 3 rounds of 30 probes instead of 10 of 50 (one sampler forest per
    # column and probe in each), on 400 rows: the causes' corrected p-values
    # are 4e-7 and 6e-9, the copy's 0.23 and the few-valued noise's 0.97
    selector = ImportanceSelector(
        RandomForestRegressor(n_estimators=30, random_state=0),
        method="conditional_permutation",
        n_rounds=3,
        n_probes=30,
        random_state=0,
    ).fit(X, y)
    assert selector.method_ == "conditional_permutation"
    assert selector.support_[0] and selector.support_[2]
    assert not selector.support_[3]


def test_conditional_categorical_column_draws_its_own_values():
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    n = 600
    colour = rng.choice(["red", "green", "blue"], size=n)
    size = rng.normal(size=n) + (colour == "red")
    X = pd.DataFrame({"colour": colour, "size": size})
    y = size + 2 * (colour == "blue") + rng.normal(scale=0.3, size=n)
    model = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(), ["colour"]), remainder=StandardScaler()
        ),
        LinearRegression(),
    ).fit(X[:300], y[:300])
    before = X.copy()
    result = conditional_permutation_importance(model, X[300:], y[300:], random_state=0)
    pd.testing.assert_frame_equal(X, before)
    assert result.importances_mean[0] > 0.5
    assert result.pvalues[0] < 1e-6


def test_conditional_rejects_missing_values_and_bad_sampler():
    X, y = correlated_regression()
    model = LinearRegression().fit(X, y)
    X_missing = X.copy()
    X_missing[0, 2] = np.nan
    with pytest.raises(ValueError, match="missing values in column.*'x2'"):
        conditional_permutation_importance(model, X_missing, y)
    with pytest.raises(InvalidParameterError, match="sampler"):
        conditional_permutation_importance(model, X, y, sampler="knockoff")


def test_conditional_integer_columns_get_integer_draws():
    rng = np.random.RandomState(0)
    n = 400
    X = rng.randint(0, 100, size=(n, 3))
    X[:, 1] = X[:, 0] + rng.randint(0, 20, size=n)
    y = X[:, 0] + rng.normal(scale=5, size=n)
    before = X.copy()
    seen = []

    class Recorder(LinearRegression):
        def predict(self, X):
            seen.append(np.asarray(X).dtype)
            return super().predict(X)

    model = Recorder().fit(X, y)
    result = conditional_permutation_importance(
        model, X, y, sampler="linear", n_repeats=2, random_state=0
    )
    np.testing.assert_array_equal(X, before)
    assert all(dtype.kind == "i" for dtype in seen)
    assert result.importances_mean[0] > result.importances_mean[1]


def test_loss_pvalues_over_row_groups():
    rng = np.random.RandomState(0)
    differences = rng.normal(0.1, 1.0, size=(3, 40))
    weight = rng.uniform(0.5, 2.0, size=40)
    # every row its own group: the row-level test
    np.testing.assert_allclose(
        loss_pvalues(differences, weight, row_groups=np.arange(40)[::-1]),
        loss_pvalues(differences, weight),
        rtol=1e-12,
    )
    # each row repeated five times, as rows of one group: the row-level test
    # counts 200 rows and is overconfident; the test over groups sees the
    # 40 independent ones, as it would without the copies
    repeated = np.repeat(differences, 5, axis=1)
    labels = np.repeat(np.arange(40), 5)
    np.testing.assert_allclose(
        loss_pvalues(repeated, row_groups=labels),
        loss_pvalues(differences),
        rtol=1e-12,
    )
    above = differences.mean(axis=1) > 0
    assert above.any()
    assert np.all(loss_pvalues(repeated)[above] < loss_pvalues(differences)[above])


def test_conditional_row_groups_change_the_pvalues_not_the_importances():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + rng.normal(size=300)
    model = LinearRegression().fit(X[:150], y[:150])
    kwargs = dict(sampler="linear", random_state=0)
    plain = conditional_permutation_importance(model, X[150:], y[150:], **kwargs)
    labels = np.arange(150) // 10
    grouped = conditional_permutation_importance(
        model, X[150:], y[150:], row_groups=labels, **kwargs
    )
    np.testing.assert_array_equal(grouped.importances, plain.importances)
    assert not np.array_equal(grouped.pvalues, plain.pvalues)
    assert grouped.pvalues[0] < 0.01
    with pytest.raises(ValueError, match="row_groups: 149 labels for 150 rows"):
        conditional_permutation_importance(
            model, X[150:], y[150:], row_groups=labels[1:], **kwargs
        )


def test_conditional_reads_the_model_once(monkeypatch):
    # every draw's engine input came from a new adapter, which for XGBoost,
    # LightGBM and CatBoost exports and parses the model again (2.5 s
    # against 0.5 s for 10 features of a 200-tree XGBoost model)
    from sklearn_fimp._engine import _scores

    calls = []
    adapter_for = _scores.adapter_for

    def counted(estimator):
        calls.append(estimator)
        return adapter_for(estimator)

    monkeypatch.setattr(_scores, "adapter_for", counted)
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] + rng.normal(size=300)
    model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    conditional_permutation_importance(
        model, X, y, sampler="linear", n_repeats=2, random_state=0
    )
    assert len(calls) == 1
