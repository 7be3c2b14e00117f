"""The rounds of ``ImportanceSelector.fit``: a fresh clone of the estimator
in each round, measured on the features and the probes held fixed
(``_rounds.probe_rounds``), stopped at the first look when every feature is
settled there."""

from contextlib import nullcontext
from functools import partial

import numpy as np
from sklearn.base import clone

from ..._engine._kept import keeping_ensembles
from ..._utils._random import MAX_SEED
from .._deciding._composed import arm_history
from .._deciding._decisions import look_rounds, stops_early
from ._pipeline_probes import with_probe_inputs
from ._probes import (
    add_probes,
    check_probes_reach_model,
    explain_failed_shadows,
)
from ._rounds import probe_rounds


def selector_rounds(plan, X, y, fit_kwargs, probe_seed):
    """``plan.n_rounds`` rounds of probes (``plan``: a ``_plan.Plan``), each
    measured on a model of the round model's by ``plan.measure`` (a fresh
    one in each of the first ``plan.round_fits`` rounds, then theirs again)
    and by each of ``plan.arms`` on the same fits: ``(result, model,
    history)`` of ``probe_rounds``, the arms' histories in ``history.arms``
    by name; the rounds stop at the first look when every test, at its
    share of alpha, has settled every feature."""
    n_groups = len(plan.groups)
    measure_round = RoundMeasure(plan, X, y)
    # a model measured again keeps what the engine read of it
    keeping = keeping_ensembles() if plan.keeps_fits else nullcontext()
    try:
        with keeping:
            result, model, history = probe_rounds(
                measure_round,
                X,
                plan.groups,
                plan.labels,
                plan.feature_names,
                plan.probes,
                plan.n_probes,
                plan.n_rounds,
                probe_seed,
                rows=plan.rows,
                add=partial(add_probes, top_up=plan.top_up),
                classes=plan.top_up[0],
                stop=union_stop(plan, n_groups, measure_round.stashed),
            )
    except (ValueError, TypeError) as exc:
        if not measure_round.n_measured and plan.probes == "shadow" and not plan.prefit:
            explain_failed_shadows(
                exc,
                X,
                lambda: clone(plan.estimator).fit(X, y, **fit_kwargs),
                plan.given_estimator,
            )
        raise
    history.arms = {
        arm.name: arm_history(history, means, n_groups)
        for arm, means in zip(plan.arms, measure_round.stashed)
    }
    return result, model, history


class RoundMeasure:
    """``measure(X_measured, all_groups, all_labels, seed, mirrored)`` of
    ``_rounds.probe_rounds`` for ``plan``: one round's model (the round
    model's, at the seed of round ``k % plan.round_fits``), its probes
    transformed as their originals where ``plan.probes_through``, measured
    by ``plan.measure`` and by each of ``plan.arms``; each arm's means
    (real groups, then probes) per round in ``stashed`` (``_composed.py``).
    """

    def __init__(self, plan, X, y):
        self.plan, self.X, self.y = plan, X, y
        self.n_measured, self.estimator_seeds = 0, []
        self.stashed = [[] for _ in plan.arms]
        self.arm_means = {}

    def _estimator_seed(self, seed):
        """The round's model seed, and the seed of its permutations: the
        rounds cycle through ``plan.round_fits`` model seeds, each round
        with fresh permutations."""
        estimator_seed, importance_seed = np.random.RandomState(seed).randint(
            MAX_SEED + 1, size=2
        )
        if len(self.estimator_seeds) < self.plan.round_fits:
            self.estimator_seeds.append(estimator_seed)
        n_seeds = self.plan.round_fits
        return int(self.estimator_seeds[self.n_measured % n_seeds]), importance_seed

    def __call__(self, X_measured, all_groups, all_labels, seed, mirrored):
        plan, X, n_groups = self.plan, self.X, len(self.plan.groups)
        estimator_seed, importance_seed = self._estimator_seed(seed)
        plan.progress(
            f"round {self.n_measured + 1} of {plan.n_rounds}: measuring "
            f"{plan.method_name!r} importances of {n_groups} features or "
            f"groups and {plan.n_probes} probes on {X.shape[0]} rows"
        )
        options = dict(
            plan.options,
            labels=all_labels,
            groups=all_groups,
            seed=importance_seed,
            # probes are independent of every column: no model of a column
            # (conditional permutation's samplers) reads them
            probe_groups=len(all_groups) - n_groups,
        )
        estimator = plan.round_estimator(estimator_seed)
        if plan.probes_through:  # probes transformed as their originals
            originals = [plan.groups[g] for g in mirrored]
            probes = list(zip(all_groups[n_groups:], originals))
            estimator = with_probe_inputs(estimator, X.shape[1], probes)
        first = not self.n_measured
        models = [] if first else None  # the first round's, checked
        # the seed is the key of the models fitted: a round with an earlier
        # round's seed measures its models again (fitted once, _measure.py)
        result = plan.measure(
            estimator,
            X_measured,
            self.y,
            options,
            models=models,
            fit_key=estimator_seed,
        )
        if first:  # every model fitted (none for a method that refits)
            for model in models or [result[1]]:
                check_probes_reach_model(model, X.shape[1], X_measured.shape[1])
        measure_arms(
            plan.arms,
            self.stashed,
            self.arm_means,
            estimator,
            X_measured,
            self.y,
            options,
            estimator_seed,
        )
        self.n_measured += 1
        return result


def union_stop(plan, n_groups, stashed):
    """``stop(history)``: whether every test (the main one, and each arm's
    on its ``stashed`` means), at its share of alpha, is settled at the
    first look (:func:`stop_rule`)."""
    share = plan.alpha / (1 + len(plan.arms))
    settled = stop_rule(
        n_groups, n_rounds=plan.n_rounds, alpha=share, correction=plan.correction
    )

    def stop(history):
        parts = [history, *(arm_history(history, m, n_groups) for m in stashed)]
        return all(settled(part) for part in parts)

    return stop


def measure_arms(arms, stashed, arm_means, estimator, X, y, options, fit_key):
    """Each arm's means on the round's fits (``fit_key``), appended to its
    list in ``stashed``: each arm measures each fit once (``arm_means``), as
    a model's contributions on its rows do not change with the rounds'
    permutations."""
    for k, (arm, means) in enumerate(zip(arms, stashed)):
        if (k, fit_key) not in arm_means:
            result, _ = arm.measure(estimator, X, y, options, fit_key=fit_key)
            arm_means[k, fit_key] = result.importances_mean
        means.append(arm_means[k, fit_key])


def stop_rule(n_groups, *, n_rounds, alpha, correction):
    """``stop(history)`` for the rounds: at the first look of
    ``_decisions.look_rounds``, whether every feature is settled
    (``_decisions.stops_early``)."""
    first_look = look_rounds(n_rounds)[0]

    def stop(history):
        return len(history.real) == first_look and stops_early(
            history, n_groups, alpha=alpha, correction=correction, n_rounds=n_rounds
        )

    return stop
