"""The round-model registry (``_selection/_measuring/_round_models.py``): which entry a
model gets, what each entry makes of it, and that a new entry is reached
by the selector's rounds and halves with no edit elsewhere."""

import warnings
from contextlib import nullcontext

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.decomposition import PCA
from sklearn.ensemble import (
    BaggingRegressor,
    ExtraTreesRegressor,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LogisticRegression, Ridge, SGDRegressor
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_fimp import ImportanceSelector
from sklearn_fimp._selection._measuring import _measure, _round_models, _selector_rounds
from sklearn_fimp._selection._measuring._round_models import (
    GENERIC,
    BaggedTrees,
    BoostedTrees,
    LinearModels,
    RoundModel,
    round_model,
)
from sklearn_fimp._utils._splits import cross_fit_splits


@pytest.mark.parametrize(
    "estimator, entry",
    [
        (RandomForestClassifier(), BaggedTrees),
        (make_pipeline(StandardScaler(), ExtraTreesRegressor()), BaggedTrees),
        (BaggingRegressor(), BaggedTrees),
        (HistGradientBoostingClassifier(), BoostedTrees),
        (make_pipeline(StandardScaler(), Ridge()), LinearModels),
        (GradientBoostingRegressor(), RoundModel),
    ],
)
def test_round_models_entry_of_a_model(estimator, entry):
    assert type(round_model(estimator)) is entry


def test_round_models_int_round_trees_needs_trees_to_share():
    with pytest.raises(ValueError, match="round_trees=7 .* bagged ensemble"):
        GENERIC.round_params(Ridge(), 7)


def test_round_models_reseed_replaces_every_seed_the_user_fixed():
    model = make_pipeline(
        StandardScaler(), RandomForestRegressor(n_estimators=5, random_state=3)
    )
    entry = round_model(model)
    made = entry.make(model, 11, entry.round_params(model, 2))
    params = made.get_params()
    assert params["randomforestregressor__random_state"] == 11
    assert params["randomforestregressor__n_estimators"] == 2
    assert model.get_params()["randomforestregressor__random_state"] == 3


@pytest.mark.parametrize(
    "estimator, round_trees, expected",
    [
        (RandomForestRegressor(), "auto", {"n_estimators": 30}),
        (RandomForestClassifier(n_estimators=200), "auto", {"n_estimators": 60}),
        (RandomForestRegressor(n_estimators=1000), "auto", {"n_estimators": 300}),
        (RandomForestRegressor(n_estimators=101), "auto", {"n_estimators": 31}),
        (RandomForestRegressor(n_estimators=40), "auto", {"n_estimators": 30}),
        (ExtraTreesRegressor(n_estimators=10), "auto", {"n_estimators": 10}),
        (RandomForestRegressor(n_estimators=200), None, {"n_estimators": 200}),
        (RandomForestRegressor(n_estimators=200), 7, {"n_estimators": 7}),
        (
            make_pipeline(StandardScaler(), make_pipeline(RandomForestRegressor())),
            "auto",
            {"pipeline__randomforestregressor__n_estimators": 30},
        ),
        (BaggingRegressor(n_estimators=50), "auto", {"n_estimators": 30}),
        (GradientBoostingRegressor(n_estimators=300), "auto", {}),
        (make_pipeline(StandardScaler(), Ridge()), None, {}),
    ],
)
def test_round_models_size_a_bagged_forest_for_the_rounds(
    estimator, round_trees, expected
):
    assert round_model(estimator).round_params(estimator, round_trees) == expected


@pytest.mark.parametrize(
    "model, y, scoring, expected",
    [
        (RandomForestClassifier(), [0, 1, 1, 0], None, "neg_brier_score"),
        # scikit-learn's Brier scorer needs numeric labels to know the
        # positive class; three classes: log-loss
        (RandomForestClassifier(), ["a", "b", "b", "a"], None, "neg_log_loss"),
        (RandomForestClassifier(), [0, 1, 2, 0], None, "neg_log_loss"),
        (
            make_pipeline(RandomForestClassifier()),
            [0, 1, 1, 0],
            None,
            "neg_brier_score",
        ),
        # smooth probabilities: log-loss
        (HistGradientBoostingClassifier(), [0, 1, 1, 0], None, "neg_log_loss"),
        (LogisticRegression(), [0, 1, 1, 0], None, "neg_log_loss"),
        (RandomForestClassifier(), [0, 1, 1, 0], "accuracy", "accuracy"),
        (RandomForestRegressor(), [0.5, 1.0, 2.0, 3.0], None, None),
    ],
)
def test_round_models_scoring_is_bounded_for_vote_shares(model, y, scoring, expected):
    assert round_model(model).scoring(model, scoring, np.asarray(y)) == expected


class _Recorded(RoundModel):
    """A new family's entry, as the boosters issue adds them: it accepts
    Ridge, fits it with a fixed alpha in each round and records what the
    rounds asked of it."""

    family = "Ridge"

    def __init__(self):
        self.seeds, self.scored = [], []

    def accepts(self, model):
        return isinstance(model, Ridge)

    def round_params(self, estimator, round_trees):
        return {"alpha": 0.5}

    def reseed(self, estimator, seed):
        self.seeds.append(seed)
        return clone(estimator)

    def scoring(self, estimator, scoring, y):
        self.scored.append(scoring)
        return "neg_mean_squared_error"


@pytest.mark.parametrize("threshold", ["probes", "stability"])
def test_round_models_new_entry_reaches_the_rounds(monkeypatch, threshold):
    entry = _Recorded()
    monkeypatch.setattr(_round_models, "ROUND_MODELS", (entry, BaggedTrees()))
    rng = np.random.RandomState(0)
    X = rng.randn(60, 3)
    y = X[:, 0] + 0.1 * rng.randn(60)
    selector = ImportanceSelector(
        Ridge(alpha=2.0),
        method="permutation",
        threshold=threshold,
        n_rounds=2,
        random_state=0,
    ).fit(X, y)
    # every round (or half) made by the entry, each with its own seed, then
    # the model the selection's score fits on the halves (selection_score_)
    rounds = entry.seeds[:-1]
    assert len(rounds) == (2 if threshold == "probes" else 4)
    assert len(set(rounds)) == len(rounds)
    assert entry.scored == [None]
    if threshold == "probes":  # (stability's result records no scoring)
        assert selector.importances_.scoring == "neg_mean_squared_error"
    # the refit keeps the user's model as given
    assert selector.estimator_.alpha == 2.0


def test_round_models_catboost_rounds_are_reseeded():
    # CatBoost leaves an unset random_seed out of get_params and fixes it to
    # 0, so the generic reseeding reached nothing and every round of probes
    # fitted one identical model; its entry sets random_seed (or the
    # random_state alias the user set)
    catboost = pytest.importorskip("catboost")
    params = dict(iterations=10, depth=3, verbose=False, thread_count=1)
    for model, name in [
        (catboost.CatBoostRegressor(**params), "random_seed"),
        (catboost.CatBoostRegressor(**params, random_state=3), "random_state"),
        (
            make_pipeline(StandardScaler(), catboost.CatBoostRegressor(**params)),
            "catboostregressor__random_seed",
        ),
    ]:
        entry = round_model(model)
        assert entry.family.startswith("CatBoost")
        assert entry.make(model, 11, {}).get_params()[name] == 11
    seen = []

    class Recorded(catboost.CatBoostRegressor):
        def fit(self, X, y, **kwargs):
            seen.append(self.get_params().get("random_seed"))
            return super().fit(X, y, **kwargs)

    rng = np.random.RandomState(0)
    X = rng.randn(80, 3)
    y = X[:, 0] + 0.5 * rng.randn(80)
    ImportanceSelector(
        Recorded(**params), method="permutation", n_rounds=3, random_state=0
    ).fit(X, y)
    # each of the 3 rounds fits both halves of the rows with its own seed
    # (a stochastic model's rounds cycle through 3), then the refit as the
    # user set it
    rounds = seen[:6]
    assert None not in rounds and len(set(rounds)) == 3
    assert rounds[0::2] == rounds[1::2]


# --------------------------------------------------------------------------
# deterministic models: each half of the rows fitted once


def _lightgbm(**params):
    lightgbm = pytest.importorskip("lightgbm")
    return lightgbm.LGBMRegressor(verbose=-1, **params)


def _xgboost(**params):
    xgboost = pytest.importorskip("xgboost")
    return xgboost.XGBRegressor(**params)


@pytest.mark.parametrize(
    "make, n_rows, expected",
    [
        (lambda: HistGradientBoostingClassifier(), 500, True),
        (lambda: HistGradientBoostingClassifier(), 20_000, False),  # stops early
        (lambda: HistGradientBoostingClassifier(early_stopping=True), 500, False),
        (lambda: _lightgbm(), 500, True),
        (lambda: _lightgbm(subsample=0.5), 500, True),  # no bagging frequency
        (lambda: _lightgbm(subsample=0.5, subsample_freq=1), 500, False),
        (lambda: _lightgbm(colsample_bytree=0.5), 500, False),
        (lambda: _xgboost(), 500, True),
        (lambda: _xgboost(subsample=0.5), 500, False),
        (lambda: LogisticRegression(), 500, True),
        (lambda: LogisticRegression(solver="saga"), 500, False),
        (lambda: make_pipeline(StandardScaler(), Ridge()), 500, True),
        (lambda: make_pipeline(PCA(svd_solver="randomized"), Ridge()), 500, False),
        (lambda: SGDRegressor(), 500, False),
        (lambda: KNeighborsRegressor(), 500, True),  # nothing to seed
        (lambda: GradientBoostingRegressor(), 500, False),  # generic, seeded
    ],
)
def test_round_models_say_which_fits_are_deterministic(make, n_rows, expected):
    estimator = make()
    entry = round_model(estimator)
    assert entry.deterministic(estimator, n_rows) is expected
    # on the same splits every round: one fit if deterministic; else three
    # seeds for a booster, whose calibration ran so, and for the others
    # each round its own, as before
    stochastic = 3 if isinstance(entry, BoostedTrees) else 10
    assert entry.round_fits(estimator, n_rows, 10) == (1 if expected else stochastic)


def test_round_models_bagged_rounds_each_fit_their_own():
    forest = RandomForestRegressor()
    assert round_model(forest).round_fits(forest, 500, 10) == 10
    # only boosters cross-fit: a linear model's permutation importance of a
    # noise column correlated with another beats its shadow's (the
    # coefficients of the pair), which every row measured makes plain
    assert round_model(HistGradientBoostingClassifier()).cross_fits
    for model in (forest, LogisticRegression(), GradientBoostingRegressor()):
        assert not round_model(model).cross_fits


def test_cross_fit_splits_hold_out_every_row_once():
    y = np.array([0] * 9 + [1] * 4 + [2] * 2 + [3])
    splits = cross_fit_splits(LogisticRegression(), y, 3)
    (train_a, test_a), (train_b, test_b) = splits
    # complementary halves of the rows, the class of one row fitted on twice
    np.testing.assert_array_equal(np.sort(np.r_[test_a, test_b]), np.arange(15))
    np.testing.assert_array_equal(np.setdiff1d(np.arange(16), test_a), train_a)
    np.testing.assert_array_equal(np.setdiff1d(np.arange(16), test_b), train_b)
    # by class: each class split as evenly as its rows allow
    for label in range(3):
        counts = [np.sum(y[test] == label) for test in (test_a, test_b)]
        assert abs(counts[0] - counts[1]) <= 1
    # a seed gives one split, another seed another
    again = cross_fit_splits(LogisticRegression(), y, 3)
    np.testing.assert_array_equal(again[0][1], test_a)
    other = cross_fit_splits(LogisticRegression(), y, 4)
    assert not np.array_equal(other[0][1], test_a)
    # a regressor's halves are drawn without classes
    (_, test), _ = cross_fit_splits(Ridge(), np.arange(9.0), 0)
    assert len(test) in (4, 5)


def _counted(base):
    class Counted(base):
        fits = []

        def fit(self, X, y, **kwargs):
            type(self).fits.append(np.asarray(X).shape[0])
            return super().fit(X, y, **kwargs)

    # the library's own, as the registry reads a model's family
    Counted.__name__, Counted.__module__ = base.__name__, base.__module__
    return Counted


@pytest.mark.parametrize("library", ["sklearn", "lightgbm"])
def test_selector_fits_a_deterministic_model_once_per_half(monkeypatch, library):
    # ten rounds of a deterministic model on fixed halves: each half fitted
    # once, every round measuring those two models with fresh permutations;
    # exactly what refitting the same model in every round gives, for the
    # same draws (the reference: the models refitted and read afresh)
    if library == "lightgbm":
        base = type(_lightgbm())
        params = dict(n_estimators=20, verbose=-1)
    else:
        from sklearn.ensemble import HistGradientBoostingRegressor as base

        params = dict(max_iter=20)
    rng = np.random.RandomState(0)
    X = rng.randn(120, 4)
    y = X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.randn(120)
    Counted = _counted(base)

    def select():
        Counted.fits = []
        selector = ImportanceSelector(
            Counted(**params), n_rounds=10, refit=False, random_state=0
        ).fit(X, y)
        # the rounds' fits, before the selection's score fits the halves
        n_rounds_fits = len(Counted.fits) - selector.selection_score_.n_fits
        return selector, list(Counted.fits)[:n_rounds_fits]

    kept, fits = select()
    assert fits == [60, 60]
    monkeypatch.setattr(
        _measure,
        "_fitted_model",
        lambda estimator, X, y, train, fit_params, fits: clone(estimator).fit(
            X[train], y[train], **fit_params
        ),
    )
    monkeypatch.setattr(_selector_rounds, "keeping_ensembles", nullcontext)
    refitted, fits = select()
    # LightGBM's "auto" also reads each half's contributions, once per fit
    composed = 2 if refitted.tests_ else 0
    assert len(fits) == 2 * refitted.n_rounds_ + composed
    np.testing.assert_array_equal(
        kept.importance_history_, refitted.importance_history_
    )
    np.testing.assert_array_equal(kept.probe_history_, refitted.probe_history_)
    np.testing.assert_array_equal(kept.support_, refitted.support_)


def test_selector_checks_probes_reach_every_cross_fitted_model():
    # the halves fit two models: a Pipeline whose ColumnTransformer drops
    # the probe columns is caught on them as on one model (it was not read
    # when several models were fitted, so that every used feature "beat"
    # probes that scored 0)
    pd = pytest.importorskip("pandas")
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.RandomState(0)
    X = pd.DataFrame(rng.randn(80, 3), columns=["a", "b", "c"])
    y = X["a"].to_numpy() + 0.1 * rng.randn(80)
    named = make_column_transformer(("passthrough", ["a", "b", "c"]))
    model = make_pipeline(named, HistGradientBoostingRegressor(max_iter=5))
    with pytest.raises(ValueError, match="pass none of the probe columns on"):
        ImportanceSelector(
            model, probes="normal", refit=False, n_rounds=1, random_state=0
        ).fit(X, y)


def test_selector_gives_a_stochastic_model_its_own_seed_each_round():
    # fresh held-out rows each round (no booster, no cv): every round fits
    # with its own seed, as before the halves
    seen = []

    class Recorded(GradientBoostingRegressor):
        def fit(self, X, y, **kwargs):
            seen.append(self.random_state)
            return super().fit(X, y, **kwargs)

    Recorded.__module__ = GradientBoostingRegressor.__module__
    rng = np.random.RandomState(0)
    X = rng.randn(60, 3)
    y = X[:, 0] + 0.5 * rng.randn(60)
    selector = ImportanceSelector(
        Recorded(n_estimators=5), n_rounds=8, refit=False, random_state=0
    ).fit(X, y)
    assert selector.n_rounds_ >= 4
    # then the selection's score: four fits of one model on the halves
    seen = seen[: -selector.selection_score_.n_fits]
    assert len(seen) == selector.n_rounds_ and len(set(seen)) == len(seen)


# --------------------------------------------------------------------------
# boosted models measured as if they had stopped early on the held-out rows


def _booster(library, n_iterations, classify=True):
    """A deterministic boosted model of ``library`` (skipped when missing)."""
    if library == "sklearn":
        from sklearn.ensemble import HistGradientBoostingRegressor

        model = (
            HistGradientBoostingClassifier
            if classify
            else (HistGradientBoostingRegressor)
        )
        return model(max_iter=n_iterations, max_leaf_nodes=7)
    if library == "lightgbm":
        lightgbm = pytest.importorskip("lightgbm")
        model = lightgbm.LGBMClassifier if classify else lightgbm.LGBMRegressor
        return model(n_estimators=n_iterations, num_leaves=7, verbose=-1)
    if library == "xgboost":
        xgboost = pytest.importorskip("xgboost")
        model = xgboost.XGBClassifier if classify else xgboost.XGBRegressor
        return model(n_estimators=n_iterations, max_depth=3, n_jobs=1)
    catboost = pytest.importorskip("catboost")
    model = catboost.CatBoostClassifier if classify else catboost.CatBoostRegressor
    return model(
        iterations=n_iterations,
        depth=3,
        learning_rate=0.1,
        random_seed=0,
        verbose=0,
        thread_count=1,
        allow_writing_files=False,
    )


def _classes(n_rows=150, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n_rows, 4)
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.randn(n_rows) > 0).astype(int)
    y[X[:, 2] > 1.2] = 2
    return X, y


LIBRARIES = ["sklearn", "lightgbm", "xgboost", "catboost"]


@pytest.mark.parametrize("library", LIBRARIES)
def test_cut_booster_is_the_model_of_its_first_iterations(library):
    # cut at k iterations, a deterministic booster is the one fitted with k
    # iterations (the same first trees): the same probabilities, and the
    # same permutation importances (the engine reads the cut trees) for the
    # same draws; the fitted model is left as it was
    from sklearn_fimp import permutation_importance

    X, y = _classes()
    model = _booster(library, 12).fit(X, y)
    before = model.predict_proba(X)
    cut = _round_models._cut(model, 5)
    short = _booster(library, 5).fit(X, y)
    np.testing.assert_allclose(cut.predict_proba(X), short.predict_proba(X), rtol=1e-6)
    assert _round_models._iterations(model) == 12
    np.testing.assert_array_equal(model.predict_proba(X), before)
    measured = [
        permutation_importance(m, X, y, scoring="neg_log_loss", random_state=0)
        for m in (cut, short)
    ]
    np.testing.assert_allclose(
        measured[0].importances, measured[1].importances, rtol=1e-6, atol=1e-12
    )


def test_most_within_one_error_keeps_the_most_iterations_within_it():
    pick = _round_models.most_within_one_error
    rising = np.arange(6.0)[:, np.newaxis] * np.ones((1, 10))
    assert pick(rising) == 5
    # past the peak (row 3) every block scores 0.5 less: the peak
    peaked = np.minimum(rising, 3.0) - 0.5 * (rising > 3)
    assert pick(peaked) == 3
    # the same mean loss spread +-3 over the blocks (a standard error of
    # 1): within one standard error, the last row
    signs = (-1.0) ** np.arange(10)
    assert pick(peaked + 3.0 * (rising > 3) * signs) == 5
    # +-0.1 (a standard error of 0.033): the peak again
    assert pick(peaked + 0.1 * (rising > 3) * signs) == 3


@pytest.mark.parametrize("classify", [True, False])
def test_held_out_stop_picks_the_count_scored_block_by_block(classify):
    # the reference: every candidate count cut, each block of rows scored
    # by its scorer (equal blocks, so that the blocks' terms and the
    # scorer on each block agree; log-loss given the model's classes)
    from sklearn_fimp._utils._scoring import get_scorer

    X, y = _classes(300, seed=1)
    if not classify:
        y = X[:, 0] + np.sin(3 * X[:, 1]) + np.random.RandomState(1).randn(300)
    model = _booster("sklearn", 60, classify).fit(X[:150], y[:150])
    scoring = "neg_log_loss" if classify else None
    scorer = get_scorer(model, scoring)
    cut = _round_models.held_out_stop(model, X[150:], y[150:], scoring)
    counts = np.unique(np.geomspace(1, 60, 24).round().astype(int))
    counts = counts[counts >= 0.3 * 60]  # never below 30% of them
    blocks = np.array_split(np.arange(150, 300), 10)
    scores = np.array(
        [
            [scorer(_round_models._cut(model, int(k)), X[b], y[b]) for b in blocks]
            for k in counts
        ]
    )
    if not classify:  # R^2 adds up over rows against all rows' variance
        total = np.sum((y[150:] - y[150:].mean()) ** 2)
        block_total = np.array([np.sum((y[b] - y[b].mean()) ** 2) for b in blocks])
        scores = 1 - (1 - scores) * block_total * 10 / total
    chosen = counts[_round_models.most_within_one_error(scores)]
    assert getattr(cut, "n_iter_", 60) == chosen and model.n_iter_ == 60


def test_held_out_stop_cuts_a_pipelines_model_and_leaves_a_stopped_one():
    lightgbm = pytest.importorskip("lightgbm")
    X, y = _classes(300, seed=1)
    pipeline = make_pipeline(StandardScaler(), _booster("sklearn", 60))
    pipeline.fit(X[:150], y[:150])
    # the Pipeline's model cut as the model alone is, on its inputs
    alone = _round_models.held_out_stop(
        pipeline[-1], pipeline[0].transform(X[150:]), y[150:], "neg_log_loss"
    )
    cut = _round_models.held_out_stop(pipeline, X[150:], y[150:], "neg_log_loss")
    assert alone.n_iter_ < 60 and cut[-1].n_iter_ == alone.n_iter_
    assert pipeline[-1].n_iter_ == 60 and cut[0] is pipeline[0]
    # LightGBM stopped early on its own: measured at its best iteration
    stopped = lightgbm.LGBMClassifier(n_estimators=50, verbose=-1)
    with warnings.catch_warnings():  # eval_set becomes eval_X, eval_y in 4.7
        warnings.simplefilter("ignore")
        stopped.fit(
            X[:100],
            y[:100],
            eval_set=[(X[100:], y[100:])],
            callbacks=[lightgbm.early_stopping(3, verbose=False)],
        )
    assert stopped.booster_.best_iteration > 0
    assert _round_models.held_out_stop(stopped, X, y, None) is stopped


def test_selector_measures_each_half_cut_once_and_refits_whole(monkeypatch):
    # round_trees="auto": each half's model is cut once (its rounds reuse
    # it); None: measured as fitted; the refit keeps every iteration
    from sklearn.ensemble import HistGradientBoostingRegressor

    calls = []
    stop = _round_models.held_out_stop

    def counted(model, X, y, scoring, sample_weight=None):
        calls.append(X.shape[0])
        return stop(model, X, y, scoring, sample_weight)

    monkeypatch.setattr(_round_models, "held_out_stop", counted)
    rng = np.random.RandomState(0)
    X = rng.randn(120, 4)
    y = X[:, 0] + 0.5 * rng.randn(120)
    model = HistGradientBoostingRegressor(max_iter=30)
    selector = ImportanceSelector(model, n_rounds=6, random_state=0).fit(X, y)
    assert calls == [60, 60]
    assert selector.estimator_.n_iter_ == 30
    calls.clear()
    ImportanceSelector(model, n_rounds=6, round_trees=None, random_state=0).fit(X, y)
    assert calls == []


def test_held_out_stop_measures_as_fitted_by_a_score_that_does_not_add_up():
    # ROC AUC is not a sum over rows, and a block may hold one class only:
    # the model is measured as fitted, not cut by a score per block
    X, y = _classes(200, seed=2)
    y = (y == 1).astype(int)
    model = _booster("sklearn", 40).fit(X[:100], y[:100])
    assert _round_models.held_out_stop(model, X[100:], y[100:], "roc_auc") is model
    cut = _round_models.held_out_stop(model, X[100:], y[100:], "neg_log_loss")
    assert cut is not model


def _stop_case(library, target, scoring, pipeline=False):
    """A booster of 60 iterations fitted on 200 rows, its 200 held-out rows,
    the additive score of them, every count the stop's candidates could
    hold (one iteration up), and the stop's blocks."""
    from sklearn_fimp._utils._scoring import AdditiveScore

    X, y = _classes(400, seed=3)
    weight = None
    if target == "binary":
        y = (y == 1).astype(int)
    elif target == "regression":
        rng = np.random.RandomState(3)
        y = X[:, 0] + np.sin(3 * X[:, 1]) + rng.randn(400)
        weight = rng.uniform(0.5, 2.0, 200)
    model = _booster(library, 60, target != "regression")
    if pipeline:
        model = make_pipeline(StandardScaler(), model)
    model.fit(X[:200], y[:200])
    additive = AdditiveScore.for_scoring(model, scoring, y[200:], weight)
    counts = np.unique(np.geomspace(1, 60, 24).round().astype(int))
    blocks = np.array_split(np.arange(200), 10)
    return model, X[200:], additive, counts, blocks


def _staged_scores(model, X, additive, counts, blocks):
    return _round_models.staged_block_scores(additive, model, X, blocks, counts)


def _each_cut_scores(model, X, additive, counts, blocks):
    # the stop's reference: every count's model cut and predicted
    from sklearn_fimp._utils._scoring import block_scores

    _, final = _round_models.final_step(model)
    return np.array(
        [
            block_scores(additive, _round_models._with_final(model, cut), X, blocks)
            for cut in _round_models._cuts(final, counts)
        ]
    )


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize(
    "target, scoring",
    [
        ("binary", "neg_log_loss"),
        ("binary", "neg_brier_score"),
        ("multiclass", "neg_log_loss"),
        ("multiclass", "accuracy"),
        ("regression", None),
        ("regression", "neg_mean_squared_error"),
    ],
)
def test_staged_block_scores_are_each_cut_models(library, target, scoring):
    # every count scored from one pass over the trees (CatBoost: each cut
    # model predicted, as before) equals each cut model predicted: the
    # same scores to rounding (HistGradientBoosting and XGBoost to the bit),
    # the same count chosen
    from sklearn_fimp._selection._measuring._staged import staged_outputs

    model, X, additive, counts, blocks = _stop_case(library, target, scoring)
    assert (staged_outputs(model, counts) is None) == (library == "catboost")
    staged = _round_models.staged_block_scores(additive, model, X, blocks, counts)
    each = _each_cut_scores(model, X, additive, counts, blocks)
    assert staged.shape == (len(counts), len(blocks))
    np.testing.assert_allclose(staged, each, rtol=1e-12, atol=0)
    if library in ("sklearn", "xgboost"):
        np.testing.assert_array_equal(staged, each)
    pick = _round_models.most_within_one_error
    assert pick(staged) == pick(each)
    floor = counts >= 0.3 * 60  # as the stop chooses
    assert pick(staged[floor]) == pick(each[floor])


@pytest.mark.parametrize("library", ["sklearn", "lightgbm", "xgboost"])
def test_staged_block_scores_of_a_pipelines_model(library, monkeypatch):
    # the model's inputs are the Pipeline's steps' outputs; LightGBM looks
    # its leaves up a block of rows at a time
    from sklearn_fimp._selection._measuring import _staged

    monkeypatch.setattr(_staged, "LEAF_VALUES", 60 * 37)
    for target, scoring in (("multiclass", "neg_log_loss"), ("regression", None)):
        case = _stop_case(library, target, scoring, pipeline=True)
        staged = _staged_scores(*case)
        np.testing.assert_allclose(staged, _each_cut_scores(*case), rtol=1e-12)


@pytest.mark.parametrize(
    "params",
    [
        {"num_parallel_tree": 3, "subsample": 0.8, "random_state": 0},
        {"multi_strategy": "multi_output_tree", "tree_method": "hist"},
        {"booster": "dart", "rate_drop": 0.1, "random_state": 0},
    ],
)
def test_staged_block_scores_of_other_xgboost_boosters(params):
    # XGBoost adds each iteration's trees (several parallel ones, or one
    # with a leaf value per class) to the margin it starts from as to its
    # base score; dart, predicted from a given margin, does not give the
    # cut model's outputs: each cut model is predicted
    from sklearn_fimp._selection._measuring._staged import staged_outputs

    case = _stop_case("xgboost", "multiclass", "neg_log_loss")
    model = clone(case[0]).set_params(**params)
    X, y = _classes(400, seed=3)
    model.fit(X[:200], y[:200])
    case = (model, *case[1:])
    dart = params.get("booster") == "dart"
    assert (staged_outputs(model, case[3]) is None) == dart
    np.testing.assert_array_equal(_staged_scores(*case), _each_cut_scores(*case))


@pytest.mark.parametrize(
    "params",
    [
        {"linear_tree": True},
        {"boosting_type": "rf", "subsample": 0.5, "subsample_freq": 1},
        {"reg_sqrt": True},
        {"objective": "poisson"},
    ],
)
def test_staged_block_scores_of_lightgbm_leave_out_what_leaves_miss(params):
    # linear trees, averaged outputs (rf) and a square-root target are not
    # their leaves' sums: each cut model is predicted; a Poisson model's
    # sums go through the exponential
    from sklearn_fimp._selection._measuring._staged import staged_outputs
    from sklearn_fimp._utils._scoring import AdditiveScore

    X, _ = _classes(400, seed=3)
    y = np.exp(X[:, 0] / 2)
    model = _booster("lightgbm", 60, False).set_params(**params).fit(X[:200], y[:200])
    additive = AdditiveScore.for_scoring(model, None, y[200:], None)
    counts = np.unique(np.geomspace(1, 60, 24).round().astype(int))
    blocks = np.array_split(np.arange(200), 10)
    staged_here = staged_outputs(model, counts) is not None
    assert staged_here == (params.get("objective") == "poisson")
    case = (model, X[200:], additive, counts, blocks)
    np.testing.assert_allclose(
        _staged_scores(*case), _each_cut_scores(*case), rtol=1e-12
    )


@pytest.mark.parametrize(
    "estimator, n_features, n_probes, expected",
    [
        (None, 12, "auto", 50),
        (None, 80, "auto", 80),
        (LogisticRegression(), 12, "auto", 200),
        (make_pipeline(StandardScaler(), LogisticRegression()), 80, "auto", 320),
        (make_pipeline(StandardScaler(), LogisticRegression()), 12, 7, 7),
    ],
)
def test_round_models_size_the_auto_probes(estimator, n_features, n_probes, expected):
    # n_probes="auto" is the round model's probes per feature, and as many
    # times 50 at least; a count the user gives is kept
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, n_features))
    y = (X[:, 0] > 0).astype(int)
    selector = ImportanceSelector(
        estimator, n_probes=n_probes, n_rounds=1, refit=False, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        selector.fit(X, y)
    assert selector.importances_.n_probes == expected
    assert selector.probe_history_.shape == (1, expected)


def test_linear_model_keeps_breast_cancers_columns_with_its_probes():
    # fixed seed: with one probe per feature (50) the test's smallest p-values
    # stopped near 1 / 51 and this kept 1 column on seeds 1 and 2 (17 on 0);
    # four per feature gave 16, 17 and 19 on seeds 0, 1 and 2
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    selector = ImportanceSelector(model, refit=False, random_state=0).fit(X, y)
    assert selector.importances_.n_probes == 200
    assert selector.get_support().sum() >= 10


def _correlated_noise(seed, n_rows=1000, n_pairs=6):
    # pure noise: pairs of columns correlated at about 0.89, a 3-class y
    # independent of them all (bench_calibration's mc3-corr-1000, smaller)
    rng = np.random.RandomState(seed)
    base = rng.normal(size=(n_rows, n_pairs))
    X = np.hstack([base, base + 0.5 * rng.normal(size=base.shape)])
    return X, rng.randint(3, size=n_rows)


def test_linear_model_tests_correlated_columns_as_groups():
    X, y = _correlated_noise(0)
    X = np.hstack([X, np.random.RandomState(1).normal(size=(len(y), 1))])
    pairs = [[j, j + 6] for j in range(6)] + [[12]]
    selector = ImportanceSelector(
        LogisticRegression(), n_rounds=2, refit=False, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        selector.fit(X, y)
    assert [list(g) for g in selector.groups_] == pairs
    assert selector.importances_.n_probes == 4 * 50
    # the user's groups, another method, another model: as given
    for given in (
        ImportanceSelector(LogisticRegression(), groups=[[0, 1]], n_rounds=2),
        ImportanceSelector(LogisticRegression(), method="drop_column", n_rounds=1),
        ImportanceSelector(LogisticRegression(), importance_getter="coef_", n_rounds=2),
        ImportanceSelector(RandomForestClassifier(n_estimators=5), n_rounds=2),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            given.set_params(refit=False, random_state=0).fit(X, y)
        assert all(len(g) == 1 for g in given.groups_[1:])


def test_linear_model_keeps_no_correlated_noise():
    # a valid test at alpha=0.05 keeps noise in a data set with probability
    # at most 0.05: in 4 or more of 8 independent data sets with probability
    # below 0.001 (binomial). Column by column, a linear model's permutation
    # credits a noise column correlated with another: these 8 kept noise in
    # all 8 then; with the pairs permuted together, in none
    kept = 0
    for seed in range(8):
        X, y = _correlated_noise(seed)
        selector = ImportanceSelector(
            LogisticRegression(), min_features=0, refit=False, random_state=seed
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            kept += bool(selector.fit(X, y).support_.any())
    assert kept <= 3


def test_linear_groups_leave_out_the_columns_a_pipeline_drops():
    # column 1 copies column 0 (rho about 0.96) but the ColumnTransformer
    # drops it: grouped with column 0 it was kept with it, though the model
    # never reads it; alone it is measured at 0 and rejected
    from sklearn.compose import ColumnTransformer

    rng = np.random.RandomState(0)
    x0 = rng.normal(size=600)
    X = np.column_stack(
        [x0, x0 + 0.3 * rng.normal(size=600), rng.normal(size=(600, 4))]
    )
    y = (x0 + 0.5 * rng.normal(size=600) > 0).astype(int)
    reads = ColumnTransformer([("s", StandardScaler(), [0, 2, 3, 4, 5])])
    model = make_pipeline(reads, LogisticRegression())
    selector = ImportanceSelector(model, refit=False, random_state=0).fit(X, y)
    assert [list(group) for group in selector.groups_] == [[j] for j in range(6)]
    assert selector.get_support().tolist() == [True] + [False] * 5
    # where every column reaches the model, the pair is tested together
    plain = make_pipeline(StandardScaler(), LogisticRegression())
    selector = ImportanceSelector(plain, refit=False, random_state=0).fit(X, y)
    assert [0, 1] in [list(group) for group in selector.groups_]


def _spectrum(seed, n_rows=150, width=40, n_noise=10, noise=1.5):
    # a block of near-duplicate columns (one factor f, correlation 0.998)
    # that carries y, then independent noise columns
    rng = np.random.RandomState(seed)
    f = rng.normal(size=n_rows)
    block = f[:, None] + 0.05 * rng.normal(size=(n_rows, width))
    X = np.hstack([block, rng.normal(size=(n_rows, n_noise))])
    return X, f + noise * rng.normal(size=n_rows)


def test_forest_tests_near_duplicate_columns_as_one_group():
    # fixed seed: column by column the forest shares the block's importance
    # among its 40 columns and none beat the probes (seeds 0, 1, 3: 0 of
    # 40; seed 2: 7); as one group the block is kept whole on all four
    X, y = _spectrum(0)
    selector = ImportanceSelector(refit=False, random_state=0, min_features=0)
    selector.fit(X, y)
    assert list(selector.groups_[0]) == list(range(40))
    assert all(len(group) == 1 for group in selector.groups_[1:])
    assert selector.get_support().tolist() == [True] * 40 + [False] * 10
    alone = ImportanceSelector(
        groups=[[j] for j in range(50)], refit=False, random_state=0, min_features=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert alone.fit(X, y).get_support()[:40].sum() < 20
    # below 0.9 the forest tells the columns apart: no group
    loose = X[:, :2] + np.random.RandomState(1).normal(size=(150, 2))
    selector = ImportanceSelector(n_rounds=2, refit=False, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        selector.fit(np.hstack([X[:, :1], loose, X[:, 40:]]), y)
    assert all(len(group) == 1 for group in selector.groups_)


def _tight_noise(seed, n_rows=200, widths=(2, 5, 20), n_alone=8):
    # pure noise: blocks of columns correlated at about 0.96, a binary y
    # independent of them all (bench_calibration's bin-tight-300, smaller)
    rng = np.random.RandomState(seed)
    shared = np.repeat(rng.normal(size=(n_rows, len(widths))), widths, axis=1)
    X = shared + 0.2 * rng.normal(size=shared.shape)
    X = np.hstack([X, rng.normal(size=(n_rows, n_alone))])
    return X, rng.randint(2, size=n_rows)


def test_forest_groups_keep_no_tight_noise_beyond_the_promise():
    # a valid test at alpha=0.05 keeps noise in a data set with probability
    # at most 0.05: in more than 4 of 10 with probability 6e-5 (binomial)
    kept = 0
    for seed in range(10):
        X, y = _tight_noise(seed)
        selector = ImportanceSelector(min_features=0, refit=False, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            selector.fit(X, y)
        assert [len(group) for group in selector.groups_[:3]] == [2, 5, 20]
        kept += bool(selector.support_.any())
    assert kept <= 4


def test_linear_model_probes_and_groups_follow_the_methods_attributes(monkeypatch):
    # a method is given four probes per feature and correlated groups by
    # its registry entry's attributes, not by its name
    import dataclasses

    from sklearn_fimp._methods import METHODS

    X, _ = _correlated_noise(0, n_rows=200)
    linear = LinearModels()
    plain = METHODS["drop_column"]
    assert linear.probes_per_feature(plain) == 1
    assert linear.probes_per_feature(None) == 1
    assert linear.probes_per_feature(METHODS["permutation"]) == 4
    assert linear.probes_per_feature(dataclasses.replace(plain, linear_path=True)) == 4
    assert linear.tested_groups(X, "drop_column") is None
    registry = dict(METHODS, drop_column=dataclasses.replace(plain, marginal=True))
    monkeypatch.setattr(_round_models, "METHODS", registry)
    assert linear.tested_groups(X, "drop_column") == linear.tested_groups(X, "auto")
    assert linear.tested_groups(X, "auto") is not None
