"""The three ways ``ImportanceSelector.fit`` can decide, one strategy each,
chosen once from ``threshold`` (:func:`mode_of`) and held by the plan.

Each mode owns what differs between them:

- ``probes``: whether probe columns are added (the round design and the
  tested columns read it);
- ``sized_for_rounds``: whether the measure is sized for many rounds (one
  permutation and a capped sample of rows a round) or for one measure;
- ``rounds(n_rounds, method)``: its "auto" budget;
- ``run(plan, X, y, fit_kwargs, seed)``: its measure loop, returning
  ``(result, model, history)``;
- ``test(selector, plan, choose)``: its decision, a strategy of
  ``_decisions.select`` (``choose``: ``keep_tentative="cv"``'s choice, for
  the probe test);
- ``rounds_run(plan, history)``: what ``n_rounds_`` reports.
"""

from sklearn.utils import Bunch

from ._deciding._composed import UnionTest
from ._deciding._decisions import (
    FixedThreshold,
    ProbeTest,
    uses_probe_test,
    uses_stability,
)
from ._deciding._stability import ROUNDS as STABILITY_ROUNDS
from ._deciding._stability import StabilitySelection, stability_rounds
from ._measuring._budget import round_count
from ._measuring._measure import real_features_only
from ._measuring._selector_rounds import selector_rounds


class ProbeRounds:
    """``threshold="probes"``: rounds of a fresh model on the features and
    probes held fixed (``_selector_rounds.py``), decided by the probe test,
    or by the union of the composed tests (``_composed.py``)."""

    probes = True
    sized_for_rounds = True

    def rounds(self, n_rounds, method):
        return round_count(n_rounds, method)

    def run(self, plan, X, y, fit_kwargs, seed):
        return selector_rounds(plan, X, y, fit_kwargs, seed)

    def test(self, selector, plan, choose=None):
        names = (plan.method_name, *(arm.name for arm in plan.arms))
        settings = dict(
            alpha=selector.alpha,
            correction=selector.correction,
            # every tentative feature: True (a numpy bool too), not "cv"
            keep_tentative=choose is None
            and not isinstance(selector.keep_tentative, str)
            and bool(selector.keep_tentative),
            n_rounds=plan.n_rounds,
            estimator=plan.estimator,
            choose_tentative=choose,
        )
        if plan.arms:
            return UnionTest(names, **settings)
        return ProbeTest(**settings)

    def rounds_run(self, plan, history):
        return len(history.real)


class StabilityHalves:
    """``threshold="stability"``: pairs of complementary halves, decided by
    the selection frequency the bound on ``pfer`` allows
    (``_stability.py``)."""

    probes = False
    sized_for_rounds = True

    def rounds(self, n_rounds, method):
        return STABILITY_ROUNDS if n_rounds == "auto" else round_count(n_rounds, method)

    def run(self, plan, X, y, fit_kwargs, seed):
        result, model, halves = stability_rounds(plan, X, y, fit_kwargs, seed)
        return result, model, Bunch(real=halves, probes=None)

    def test(self, selector, plan, choose=None):
        return StabilitySelection(selector.pfer)

    def rounds_run(self, plan, history):
        return plan.n_rounds


class SingleMeasure:
    """A float, "mean" or "median" threshold: one measure of the features,
    no probes (``_decisions.FixedThreshold``)."""

    probes = False
    sized_for_rounds = False

    def rounds(self, n_rounds, method):
        return round_count(n_rounds, method)

    def run(self, plan, X, y, fit_kwargs, seed):
        plan.progress(
            f"measuring {plan.method_name!r} importances of {len(plan.groups)} "
            f"features or groups on {X.shape[0]} rows"
        )
        result, model = plan.measure(plan.estimator, X, y, plan.options)
        return real_features_only(result, plan.labels, plan.groups), model, None

    def test(self, selector, plan, choose=None):
        return FixedThreshold(selector.threshold)

    def rounds_run(self, plan, history):
        return 0


def mode_of(threshold, prefit):
    """The mode ``threshold`` asks for (checked against ``prefit``: a fitted
    model never saw probes and cannot be refitted on halves)."""
    if uses_probe_test(threshold, prefit):
        return ProbeRounds()
    if uses_stability(threshold):
        return StabilityHalves()
    return SingleMeasure()
