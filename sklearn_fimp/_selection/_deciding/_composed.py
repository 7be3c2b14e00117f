"""The tests ``method="auto"`` composes, and their union.

A permutation test asks what the model loses when a column is broken, and
redundant columns defeat it: each stands in for the others, so no single
one costs the model much, and none beats its probes. The model's own
per-row contributions (TreeSHAP) credit every column the model uses,
redundant or not, and need no permutation per column. Where the round
model's family reads them natively (``RoundModel.contributions``: LightGBM,
XGBoost, CatBoost), ``method="auto"`` measures both on the same rounds'
fits and keeps what either confirms.

The promise: each of the k tests runs at ``alpha / k``. A union's false
discovery proportion is at most the sum of the parts' (its false
discoveries are at most the sum of theirs, and it keeps at least as many
as each), so the union's false discovery rate is at most ``alpha``; with
Holm's or Bonferroni's correction the same sum bounds the chance of
keeping any noise feature.
"""

from typing import NamedTuple

import numpy as np
from sklearn.utils import Bunch

from ._decisions import (
    DECISIONS,
    decision_of,
    per_feature,
    probe_decision,
    probe_outcome,
    warn_if_probes_unseen,
)

#: max_samples="auto" of an arm: the held-out rows each fit's contributions
#: are measured on, once per fit (the rounds of a deterministic booster
#: measure one fit per half; a model's contributions on its rows do not
#: change with the rounds' permutations).
ARM_ROWS = 500


class Arm(NamedTuple):
    """One more test the rounds measure on their models: the method's name,
    its registry entry, and its measure step (``_measure.measure_step``,
    sharing the main step's fits)."""

    name: str
    method: object
    measure: object


def arm(name, max_samples, **step):
    """The :class:`Arm` of method ``name``: its registry entry, measured by
    a step of its own (``_measure.measure_step`` with ``step``, the main
    step's ``fits`` among them) on at most ``max_samples`` rows ("auto":
    ``ARM_ROWS``) of each fit."""
    from ..._methods import METHODS
    from .._measuring._budget import measure_rows
    from .._measuring._measure import measure_step

    method = METHODS[name]
    rows = (
        ARM_ROWS if max_samples == "auto" else measure_rows(max_samples, True, method)
    )
    return Arm(
        name,
        method,
        measure_step(
            method, max_samples=rows, prefit=False, getter=None, keep_fits=True, **step
        ),
    )


def contribution_method(params, rounds_model, estimator, method, round_cv, y):
    """The name of the method ``method="auto"`` composes with the
    permutation test for this fit, or None (``params``: the selector's
    ``get_params``): the round model's
    contributions (``RoundModel.contributions``), where the probes decide,
    the user chose neither the method nor an ``importance_getter`` (the
    contributions sum over the test's groups as permutation permutes them),
    the rounds measure two cross-fitted halves
    (``round_cv``: independent rows, no ``cv``), the resolved ``method`` is
    one that redundant columns defeat (``misses_redundant``), and the
    contributions' method can measure the estimator on y."""
    from ..._methods import METHODS, check_method

    plain = (
        params["method"] == "auto"
        and params["importance_getter"] is None
        and not params["prefit"]
        and params["cv"] is None
        and round_cv is not None
        and method is not None
        and method.misses_redundant
    )
    if not plain:
        return None
    name = rounds_model.contributions(estimator)
    if name is None:
        return None
    try:
        check_method(METHODS[name], estimator, y=y)
    except (ValueError, TypeError, ImportError):
        return None
    return name


def arm_history(history, stash, n_groups):
    """The rounds' history of an arm's test: its means per round
    (``stash``: one array of the real groups and the probes per round)
    beside the main test's probes' owners and classes."""
    means = np.asarray(stash, dtype=float).reshape(len(stash), -1)
    done = len(means)
    return Bunch(
        real=means[:, :n_groups],
        probes=means[:, n_groups:],
        owners=history.owners[:done],
        classes=history.get("classes"),
        fixed=history.get("fixed", True),
    )


class UnionTest:
    """The probe test of each of ``names`` (the main measure's first, then
    the arms' histories in ``history.arms``) at ``alpha / k``, and the
    features any of them confirms (:class:`~._decisions.Outcome`). A
    feature's p-value is ``k`` times its smallest over the tests (at most
    1), its corrected p-value likewise, so that it passes at ``alpha``
    exactly when one test passes at its share; its score and the threshold
    are the main test's. ``parts`` holds each test's own result after
    ``decide``."""

    def __init__(
        self,
        names,
        *,
        alpha,
        correction,
        keep_tentative,
        n_rounds,
        estimator,
        choose_tentative=None,
    ):
        self.names = tuple(names)
        self.alpha = alpha
        self.correction = correction
        self.keep_tentative = keep_tentative
        self.n_rounds = n_rounds
        self.estimator = estimator
        self.choose_tentative = choose_tentative
        self.parts = {}

    def decide(self, result, history, n_real):
        warn_if_probes_unseen(history, self.estimator, stacklevel=8)
        k = len(self.names)
        share = self.alpha / k
        histories = [history, *(history.arms[name] for name in self.names[1:])]
        tests = [
            probe_decision(
                part,
                n_real,
                alpha=share,
                correction=self.correction,
                keep_tentative=False,
                n_rounds=self.n_rounds,
            )
            for part in histories
        ]
        self.parts = {
            name: Bunch(
                alpha=share,
                statistics=test.scores,
                pvalues=test.pvalues,
                pvalues_corrected=test.corrected,
                decisions=test.decisions,
                importance_history=part.real,
            )
            for name, test, part in zip(self.names, tests, histories)
        }
        pvalues = np.minimum(k * np.min([t.pvalues for t in tests], axis=0), 1.0)
        corrected = np.minimum(k * np.min([t.corrected for t in tests], axis=0), 1.0)
        main = tests[0]
        test = decision_of(
            main.scores,
            pvalues,
            corrected,
            main.threshold,
            self.alpha,
            self.keep_tentative,
        )
        detail = (
            f"beat the probes by {' or '.join(map(repr, self.names))} at "
            f"alpha={self.alpha} (alpha/{k} each, correction={self.correction!r})"
        )
        return probe_outcome(test, self.choose_tentative, detail)


def composed_tests(test, groups, n_features):
    """``tests_``: each composed test's share of alpha, p-values, corrected
    p-values, decisions (per feature: a group's spread to its columns) and
    importances per round, by name, from ``test.parts`` (a
    :class:`UnionTest` after ``decide``); None for a test of its own."""
    parts = getattr(test, "parts", {})
    if not parts:
        return None
    out = {}
    for name, part in parts.items():
        rank = np.select(
            [part.decisions == "confirmed", part.decisions == "tentative"], [1, 2], 3
        )
        out[name] = Bunch(
            alpha=part.alpha,
            pvalues=per_feature(part.pvalues, groups, n_features),
            pvalues_corrected=per_feature(part.pvalues_corrected, groups, n_features),
            decisions=DECISIONS[per_feature(rank, groups, n_features).astype(int) - 1],
            importance_history=part.importance_history,
        )
    return out
