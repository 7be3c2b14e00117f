"""The selector's power on small versions of issue 41's data sets: Madelon's
design, correlated blocks with p near n, an imbalanced target, and a
boosted model (``_power_cases.py``), with fixed seeds.

Each test counts the data sets (seeds 0, 1, ...) on which the default
``ImportanceSelector`` succeeds (``_power_cases.succeeded``) and asserts a
count that a selector with the measured success rate reaches with
probability at least 0.999. The rate is measured by
``python bench/bench_power_small.py --seeds 30`` on seeds 100-129 (other
data sets than the tests'), side by side with BorutaPy; ``MEASURED`` holds
its counts. The rate assumed is the one-sided 95% Clopper-Pearson lower
bound of the measured one, so a selector as good as the measured one
passes with probability at least 0.999 (given that bound, which holds 19
times in 20); the bounds are loose (20 data sets cannot say more at
0.999), but a selector that keeps too little (the one before issue 41
kept none of 12 causal columns of the benchmark's blocks) fails them.
"""

import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.ensemble import HistGradientBoostingClassifier

from sklearn_fimp import ImportanceSelector

from ._power_cases import CASES, succeeded

#: successes of the default selector over the data sets of seeds 100-129
#: (``bench/bench_power_small.py --seeds 30``, one run). BorutaPy on the
#: same data sets, in the same run: madelon 22 (5.57 of 6 relevant columns
#: kept, 0.97 noise columns, against ours 4.70 and 0.13), blocks 14 (3.97 of
#: 4 causal columns, 0.67 of null blocks, against ours 2.70 and 0.30),
#: imbalanced 27 (3.70 of 4, 0.67 noise, against 3.60 and 0.13), boosted
#: 30 with its forest (4.00 of 4, 0.33 noise; ours with the default forest
#: 27). The boosted models, rerun with cross-fitted halves and each half's
#: model measured as if stopped early (issue 58, ``--cases boosted
#: --no-boruta --seeds 30``, one run): HistGradientBoosting 27 (3.73 of 4,
#: 0.07 noise; 27 with the halves alone, 3.70 and 0.03), LightGBM 26 (3.70,
#: 0.13; 26, 3.67, 0.13), XGBoost 29 (3.73, 0.07; 30, 3.83, 0.03), each
#: with 50 trees. CatBoost (50 iterations, its rounds reseeded), in a run of
#: all four boosters that gave the three others the same counts: 30 (3.87,
#: 0.03)
MEASURED = {
    "madelon": (26, 30),
    "blocks": (18, 30),
    "imbalanced": (27, 30),
    "boosted": (27, 30),
    "boosted-lightgbm": (26, 30),
    "boosted-xgboost": (29, 30),
    "boosted-catboost": (30, 30),
}
#: data sets each test fits
DATA_SETS = {
    "madelon": 20,
    "blocks": 20,
    "imbalanced": 15,
    "boosted": 10,
    "boosted-lightgbm": 10,
    "boosted-xgboost": 10,
    "boosted-catboost": 10,
}


def required(case):
    """The fewest successes of ``DATA_SETS[case]`` that a selector whose
    success rate is the 95% lower bound of ``MEASURED[case]`` reaches with
    probability at least 0.999."""
    successes, trials = MEASURED[case]
    rate = stats.beta.ppf(0.05, successes, trials - successes + 1)
    n = DATA_SETS[case]
    k = int(stats.binom.ppf(0.001, n, rate))
    assert stats.binom.sf(k - 1, n, rate) >= 0.999
    return k


def successes(case, model=None):
    count = 0
    for seed in range(DATA_SETS[case]):
        data = CASES[case.partition("-")[0]](seed)
        estimator = None if model is None else model(seed)
        selector = ImportanceSelector(estimator, refit=False, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            selector.fit(data.X, data.y)
        count += succeeded(case.partition("-")[0], data, selector.support_)
    return count


def test_required_counts_follow_the_measured_rates():
    # the bound is a real one: at least one success is needed everywhere
    for case in MEASURED:
        assert 1 <= required(case) <= DATA_SETS[case]


@pytest.mark.slow
@pytest.mark.parametrize("case", ["madelon", "blocks", "imbalanced"])
def test_default_selector_finds_the_relevant_columns(case):
    assert successes(case) >= required(case)


def _booster(library):
    """``model(seed)``: the booster of ``library`` with 50 trees, one thread,
    as ``bench/bench_power_small.py`` wraps it (skipped when not installed)."""
    if library == "sklearn":
        return lambda seed: HistGradientBoostingClassifier(
            max_iter=50, random_state=seed
        )
    booster = pytest.importorskip(library)
    if library == "catboost":
        return lambda seed: booster.CatBoostClassifier(
            iterations=50,
            random_seed=seed,
            thread_count=1,
            verbose=False,
            allow_writing_files=False,
        )
    make = booster.LGBMClassifier if library == "lightgbm" else booster.XGBClassifier
    params = {"verbose": -1} if library == "lightgbm" else {}
    return lambda seed: make(n_estimators=50, random_state=seed, n_jobs=1, **params)


BOOSTERS = ["sklearn", "lightgbm", "xgboost", "catboost"]


@pytest.mark.slow
@pytest.mark.parametrize("library", BOOSTERS)
def test_selector_finds_the_informative_columns_of_a_boosted_model(library):
    case = "boosted" if library == "sklearn" else f"boosted-{library}"
    assert successes(case, _booster(library)) >= required(case)


def test_power_cases_draw_what_they_say():
    data = CASES["blocks"](0)
    assert data.X.shape == (300, 300)
    # the causal columns' blocks correlate within, not across
    corr = np.corrcoef(data.X[:, [0, 1, 20]].T)
    assert corr[0, 1] > 0.3 and abs(corr[0, 2]) < 0.2
    kept = np.zeros(300, dtype=bool)
    kept[[0, 20, 1]] = True  # two causal columns and a correlate
    assert succeeded("blocks", data, kept)
    kept[299] = True  # a column of a null block
    assert not succeeded("blocks", data, kept)


def _noise_data(seed):
    """bench_calibration's bin-mixed-300 drawn small: 300 rows, 5 N(0, 1)
    and 5 three-level columns, a binary y independent of all of them."""
    rng = np.random.RandomState(seed)
    X = np.hstack([rng.normal(size=(300, 5)), rng.randint(3, size=(300, 5))])
    return X, rng.randint(2, size=300)


#: data sets of the null regime per booster, and the most that may keep any
#: noise: a selector whose share of such data sets is the promised 0.05
#: keeps noise in more than 4 of 10 with probability 6e-5 (the calibration
#: page's bin-mixed-300: 1 of 20 for HistGradientBoosting, 0 of 20 for
#: LightGBM, XGBoost and CatBoost, 100 trees)
NULL_DATA_SETS, NULL_MOST = 10, 4


def test_null_bound_is_a_bound_at_the_promised_rate():
    assert stats.binom.sf(NULL_MOST, NULL_DATA_SETS, 0.05) < 0.001


@pytest.mark.slow
@pytest.mark.parametrize("library", BOOSTERS)
def test_boosted_models_keep_noise_no_more_than_promised(library):
    model = _booster(library)
    with_noise = 0
    for seed in range(NULL_DATA_SETS):
        X, y = _noise_data(seed)
        selector = ImportanceSelector(
            model(seed), min_features=0, refit=False, random_state=seed
        ).fit(X, y)
        with_noise += bool(selector.support_.any())
    assert with_noise <= NULL_MOST


def test_default_keeps_the_strong_columns_of_a_wide_table():
    # more columns than rows (120 x 300), the first three strong: the
    # default forest keeps exactly them (fixed seed; seeds 0-2 alike)
    rng = np.random.RandomState(0)
    X = rng.standard_normal((120, 300))
    y = 2 * X[:, :3].sum(axis=1) + 0.5 * rng.standard_normal(120)
    selector = ImportanceSelector(refit=False, random_state=0).fit(X, y)
    np.testing.assert_array_equal(selector.get_support(indices=True), [0, 1, 2])


@pytest.mark.slow
def test_default_keeps_noise_no_more_than_promised_on_wide_nulls():
    # pure noise, 300 columns on 80 rows: a valid test keeps noise in more
    # than NULL_MOST of NULL_DATA_SETS data sets with probability 6e-5
    # (measured: 1 of 10)
    with_noise = 0
    for seed in range(NULL_DATA_SETS):
        rng = np.random.RandomState(seed)
        X, y = rng.standard_normal((80, 300)), rng.standard_normal(80)
        selector = ImportanceSelector(
            min_features=0, refit=False, random_state=seed
        ).fit(X, y)
        with_noise += bool(selector.support_.any())
    assert with_noise <= NULL_MOST


@pytest.mark.slow
def test_default_keeps_noise_no_more_than_promised_on_a_wide_mix_of_classes():
    # pure noise, 212 columns on 150 rows: 100 normal and 100 sparse binary
    # ones (each class a null of its own) and 12 ten-level ones, which get
    # shadows of their own (_probes.class_top_up) rather than the pool of
    # the others'; a valid test keeps noise in more than NULL_MOST of
    # NULL_DATA_SETS data sets with probability 6e-5 (measured: 0 of 10)
    with_noise = 0
    for seed in range(NULL_DATA_SETS):
        rng = np.random.RandomState(seed)
        share = rng.uniform(0.02, 0.3, size=100)
        X = np.hstack(
            [
                rng.standard_normal((150, 100)),
                (rng.uniform(size=(150, 100)) < share).astype(float),
                rng.randint(0, 10, size=(150, 12)).astype(float),
            ]
        )
        y = rng.randint(0, 2, size=150)
        selector = ImportanceSelector(
            min_features=0, refit=False, random_state=seed
        ).fit(X, y)
        assert selector.probe_history_.shape[1] > 212  # the ten-level's own
        with_noise += bool(selector.support_.any())
    assert with_noise <= NULL_MOST
