"""method="auto" composes the permutation test with a booster's own
contributions (``_composed.py``), and every fit measures the score its
selection costs (``_score_cost.py``)."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification, make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.utils import Bunch

from sklearn_fimp import ImportanceSelector
from sklearn_fimp._selection._deciding._score_cost import SCORE_LOSS, selection_score
from sklearn_fimp._selection._rows import INDEPENDENT
from sklearn_fimp._utils._scoring import get_scorer
from sklearn_fimp._utils._splits import cross_fit_splits

lightgbm = pytest.importorskip("lightgbm")


def _booster(**params):
    return lightgbm.LGBMClassifier(
        n_estimators=20, min_child_samples=5, verbose=-1, **params
    )


def _redundant(seed=0):
    return make_classification(
        300,
        12,
        n_informative=3,
        n_redundant=6,
        shuffle=False,
        random_state=seed,
    )


def test_auto_keeps_what_either_test_confirms_at_half_alpha():
    # three rounds look once: the permutation arm is exactly the test of
    # method="permutation" at alpha / 2, and the union keeps what either
    # arm confirms
    X, y = _redundant()
    auto = ImportanceSelector(_booster(), n_rounds=3, random_state=0).fit(X, y)
    assert set(auto.tests_) == {"permutation", "shap"}
    alone = ImportanceSelector(
        _booster(), method="permutation", n_rounds=3, alpha=0.025, random_state=0
    ).fit(X, y)
    permutation = auto.tests_["permutation"]
    np.testing.assert_array_equal(
        permutation.importance_history, alone.importance_history_
    )
    np.testing.assert_array_equal(permutation.decisions, alone.decisions_)
    assert permutation.alpha == auto.tests_["shap"].alpha == 0.025
    either = np.zeros(X.shape[1], dtype=bool)
    for part in auto.tests_.values():
        either |= part.decisions == "confirmed"
    np.testing.assert_array_equal(auto.support_, either)
    np.testing.assert_array_equal(auto.decisions_ == "confirmed", either)
    # a feature's corrected p-value is twice its smallest over the arms
    smallest = np.minimum(
        permutation.pvalues_corrected, auto.tests_["shap"].pvalues_corrected
    )
    np.testing.assert_allclose(auto.pvalues_corrected_, np.minimum(2 * smallest, 1))


def test_auto_shap_arm_tests_the_contributions_history_it_records():
    # the shap arm's decisions are the probe test of its own history, at its
    # share of alpha, against the probes' means it measured on the same fits
    X, y = _redundant(1)
    auto = ImportanceSelector(_booster(), n_rounds=3, random_state=1).fit(X, y)
    shap = auto.tests_["shap"]
    history = shap.importance_history
    assert history.shape == (auto.n_rounds_, len(auto.groups_))
    # a deterministic booster's two halves are fitted once: every round
    # reads the same contributions
    np.testing.assert_array_equal(history, np.repeat(history[:1], len(history), 0))
    assert (history > 0).sum() >= 3


def test_auto_contributions_share_the_permutation_fits(monkeypatch):
    fits = []
    original = lightgbm.LGBMClassifier.fit

    def counted(self, X, y, **kwargs):
        fits.append(X.shape)
        return original(self, X, y, **kwargs)

    monkeypatch.setattr(lightgbm.LGBMClassifier, "fit", counted)
    X, y = _redundant()
    counts = {}
    for method in ("auto", "permutation"):
        fits.clear()
        selector = ImportanceSelector(_booster(), method=method, random_state=0)
        selector.fit(X, y)
        # the rounds' fits; then the selection score's, on what each kept
        counts[method] = fits[: len(fits) - selector.selection_score_.n_fits]
    assert counts["auto"] == counts["permutation"]


def test_auto_composes_only_where_the_booster_reads_its_own_contributions():
    X, y = make_friedman1(200, 8, random_state=0)
    forest = ImportanceSelector(
        RandomForestRegressor(n_estimators=20), random_state=0
    ).fit(X, y)
    assert forest.tests_ is None
    Xc, yc = _redundant()
    for selector in (
        ImportanceSelector(_booster(), method="permutation", random_state=0),
        ImportanceSelector(_booster(), cv=3, random_state=0),
    ):
        assert selector.fit(Xc, yc).tests_ is None
    # the user's groups: the contributions sum over each group, as the
    # permutation test permutes it
    grouped = ImportanceSelector(_booster(), groups=[[0, 1]], random_state=0)
    grouped.fit(Xc, yc)
    assert set(grouped.tests_) == {"permutation", "shap"}
    history = grouped.tests_["shap"].importance_history
    assert history.shape[1] == len(grouped.groups_) == Xc.shape[1] - 1


def test_auto_union_keeps_noise_rarely_on_pure_noise():
    # 20 pure-noise tables: under its promise the union keeps noise in a
    # table with probability at most alpha = 0.05 (every kept column is a
    # false discovery there); at most 5 of 20 fails a correct test with
    # probability below 0.001 (binomial tail at 0.05: 3e-4)
    kept_noise = 0
    for seed in range(20):
        rng = np.random.RandomState(seed)
        X = rng.randn(200, 10)
        y = rng.randint(2, size=200)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            selector = ImportanceSelector(
                _booster(), min_features=0, random_state=seed
            ).fit(X, y)
        kept_noise += bool(selector.support_.any())
    assert kept_noise <= 5


def test_selection_score_equals_the_halves_refitted_by_hand():
    X, y = make_friedman1(240, 6, noise=0.5, random_state=0)
    plan = Bunch(
        rows=Bunch(kind=INDEPENDENT),
        cv=None,
        scoring=None,
        estimator=Ridge(),
        options={"scoring": None, "sample_weight": None},
        round_estimator=lambda seed: Ridge(),
        column_names=[],
    )
    support = np.array([True, True, False, True, False, False])
    cost = selection_score(plan, X, y, support, fit_kwargs={}, seed=3)
    kept, every = [], []
    for train, test in cross_fit_splits(Ridge(), y, 3):
        for columns, out in ((support, kept), (slice(None), every)):
            model = clone(Ridge()).fit(X[train][:, columns], y[train])
            scorer = get_scorer(model, None)
            out.append(scorer(model, X[test][:, columns], y[test]))
    assert cost.kept == pytest.approx(np.mean(kept))
    assert cost.all == pytest.approx(np.mean(every))
    assert cost.chance == pytest.approx(0.0, abs=1e-12)  # R^2 of the mean
    assert cost.lost == pytest.approx((cost.all - cost.kept) / cost.all)
    assert cost.n_fits == 4


def test_selection_score_is_measured_on_every_fit_and_warns_of_a_loss():
    X, y = make_friedman1(300, 8, noise=0.5, random_state=0)
    # every column kept: nothing lost, nothing fitted
    everything = ImportanceSelector(Ridge(), threshold=-np.inf).fit(X, y)
    assert everything.selection_score_.lost == 0.0
    assert everything.selection_score_.n_fits == 0
    # one column of five that matter: the selection costs most of the score
    with pytest.warns(UserWarning, match="selection loses") as record:
        one = ImportanceSelector(
            Ridge(), threshold=-np.inf, max_features=1, random_state=0
        ).fit(X, y)
    assert one.selection_score_.lost > SCORE_LOSS
    assert "max_features kept 1" in str(record[0].message)
    prefit = ImportanceSelector(Ridge().fit(X, y), prefit=True, threshold="mean")
    assert prefit.fit(X, y).selection_score_ is None
