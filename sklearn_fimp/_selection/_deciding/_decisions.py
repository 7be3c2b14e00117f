"""ImportanceSelector's decisions as pure functions: which features (or
groups) pass the threshold or the probe test, how ``max_features`` and
``min_features`` change that, and the per-feature arrays of the fitted
selector."""

import numbers
import re
import warnings
from functools import partial
from typing import NamedTuple

import numpy as np

from ._probe_test import (
    adjust_pvalues,
    critical_pvalue,
    decide,
    mean_critical_value,
    mean_test,
)

_SCALED_THRESHOLD = re.compile(r"^\s*([0-9.eE+-]+)\s*\*\s*(mean|median)\s*$")
DECISIONS = np.array(["confirmed", "tentative", "rejected"], dtype=object)


def parse_threshold(threshold, importances):
    """The importance value a float / "mean" / "median" / "1.5*mean" means."""
    if isinstance(threshold, numbers.Real) and not isinstance(threshold, bool):
        return float(threshold)
    match = _SCALED_THRESHOLD.match(threshold)
    if threshold in ("mean", "median"):
        scale, reference = 1.0, threshold
    elif match is not None:
        try:
            scale = float(match.group(1))
        except ValueError:
            match = None
        reference = match.group(2) if match is not None else None
    if threshold not in ("mean", "median") and match is None:
        raise ValueError(
            f"threshold={threshold!r} is not understood; pass 'probes', "
            "'stability', a float, "
            "'mean', 'median', or a scaled reference such as '1.5*mean' or "
            "'0.5*median'."
        )
    center = np.mean(importances) if reference == "mean" else np.median(importances)
    return float(scale * center)


def uses_probe_test(threshold, prefit):
    """Whether ``threshold`` is the probe test (a bad threshold string, or
    probes or stability selection with ``prefit=True``, are rejected here,
    before any fit)."""
    use_probes = isinstance(threshold, str) and threshold == "probes"
    if (use_probes or uses_stability(threshold)) and prefit:
        raise ValueError(
            f"threshold={threshold!r} with prefit=True: "
            + (
                "the fitted estimator has never seen probe columns, so no "
                "method can measure their importance without refitting it."
                if use_probes
                else "stability selection refits the estimator on halves of "
                "the rows, which a fitted estimator cannot be."
            )
            + " Pass prefit=False, or a float, 'mean' or 'median' threshold."
        )
    if not use_probes and not uses_stability(threshold):
        parse_threshold(threshold, np.zeros(1))
    return use_probes


def uses_stability(threshold):
    """Whether ``threshold`` is stability selection (``_stability.py``)."""
    return isinstance(threshold, str) and threshold == "stability"


def check_min_features(min_features, n_groups, max_features=None, max_count=None):
    """``min_features`` cannot exceed the features (or groups) of X, nor
    ``max_features`` (given as ``max_features``, counted as ``max_count``):
    the selection could not honour both."""
    if min_features > n_groups:
        raise ValueError(
            f"min_features={min_features} is more than the {n_groups} features "
            f"(or groups) of X; pass at most {n_groups}."
        )
    if max_features is not None and min_features > max_count:
        given = (
            f"max_features={max_features!r}"
            if max_count == max_features
            else f"max_features={max_features!r} (max_features_={max_count})"
        )
        fix = (
            "pass min_features=0 to keep no feature, as "
            "SelectFromModel(max_features=0) does"
            if max_count == 0
            else f"pass min_features at most {max_count}, or a larger max_features"
        )
        raise ValueError(
            f"min_features={min_features} asks for more features than {given} "
            f"allows; {fix}."
        )


def check_finite_importances(result, history, n_real):
    """No selection can be made from a NaN importance (a scorer or an
    ``importance_getter`` that returned NaN): ranking by it would keep
    features in column order, so it is an error naming them."""
    undefined = np.isnan(result.importances_mean[:n_real])
    probes = 0
    if history is not None:
        undefined |= np.isnan(history.real).any(axis=0)
        if history.probes is not None:
            probes = int(np.isnan(history.probes).any(axis=0).sum())
    if not undefined.any() and not probes:
        return
    names = [str(name) for name in np.asarray(result.feature_names)[:n_real]]
    named = [names[g] for g in np.flatnonzero(undefined)]
    shown = ", ".join(repr(name) for name in named[:5])
    more = f" and {len(named) - 5} more" if len(named) > 5 else ""
    what = []
    if named:
        what.append(
            f"the importances of {len(named)} of {n_real} features (or groups) "
            f"are NaN ({shown}{more})"
        )
    if probes:
        what.append(f"the importances of {probes} probes are NaN")
    raise ValueError(
        f"{' and '.join(what)}, so no threshold or test can rank the features. "
        "A scorer or an importance_getter returned NaN, or the model predicted "
        "NaN: check them on these rows (scoring=, importance_getter=), or impute "
        "what the model cannot take."
    )


def threshold_decision(means, threshold):
    """Features whose mean importance reaches ``threshold`` (a float or a
    statistic of the means): ``(passed, order, threshold, ranking)``, the
    order and ranking by decreasing mean."""
    n_real = len(means)
    value = parse_threshold(threshold, means)
    order = np.argsort(-means, kind="stable")
    ranking = np.empty(n_real, dtype=int)
    ranking[order] = np.arange(1, n_real + 1)
    return means >= value, order, value, ranking


class ProbeDecision(NamedTuple):
    """The probe test's outcome, per feature (or group)."""

    #: kept: confirmed, or tentative with ``keep_tentative``
    passed: np.ndarray
    #: the features by significance (p-value, then score)
    order: np.ndarray
    #: the score at the level the correction reached
    threshold: float
    scores: np.ndarray
    pvalues: np.ndarray
    corrected: np.ndarray
    ranking: np.ndarray
    #: "confirmed", "tentative" or "rejected"
    decisions: np.ndarray


#: The share of ``alpha`` each look at the rounds spends (see look_rounds):
#: a quarter at the first look, which settles what is clear early, and the
#: rest at the last.
LOOK_SPENDING = (0.25, 0.75)
#: A feature whose p-value at the first look is above this is rejected if
#: the rounds stop there (see stops_early). A lower bound would stop more
#: often and was measured (docs/probe_test.rst): 0.02 stops 638 of the 976
#: calibration data sets whose kept rounds ran all ten rounds, without
#: losing an informative feature there, but it called the three strongest
#: columns of the user guide's diabetes Pipeline futile (p-values 0.031 to
#: 0.047 after five rounds, 2e-4 to 0.0017 after ten): with 50 probes the
#: first look cannot resolve smaller p-values on weak signal.
FUTILE_PVALUE = 0.1


def look_rounds(n_rounds):
    """The rounds after which the probe test looks at the evidence: half of
    ``n_rounds`` (rounded up) and all of them, or only all of them below
    four rounds."""
    n_rounds = int(n_rounds)
    return (n_rounds,) if n_rounds < 4 else (-(-n_rounds // 2), n_rounds)


def _looks(history, n_real, correction, n_rounds):
    """The mean test at every look the rounds reached: ``(statistics,
    pvalues, null, corrected, share)`` for each, ``corrected`` already
    divided by the look's ``share`` of alpha (``n_rounds`` None: one look,
    at every round done)."""
    done = history.real.shape[0]
    looks = (done,) if n_rounds is None else look_rounds(n_rounds)
    spending = LOOK_SPENDING if len(looks) > 1 else (1.0,)
    out = []
    for rounds, share in zip(looks, spending):
        if rounds > done:
            break
        statistics, pvalues, null = mean_test(
            history.real[:rounds],
            history.probes[:rounds],
            history.owners[:rounds],
            n_real,
            classes=history.get("classes"),
        )
        corrected = adjust_pvalues(pvalues, correction) / share
        out.append((statistics, pvalues, null, corrected, share))
    return out


def stops_early(history, n_real, *, alpha, correction, n_rounds):
    """Whether the rounds can stop at the first look: every feature is
    confirmed there, or has a p-value above ``FUTILE_PVALUE`` (the evidence
    of a noise feature barely moves with more rounds: its mean keeps its
    chance association with y; the later rounds would only cost)."""
    looks = _looks(history, n_real, correction, n_rounds)
    _, pvalues, _, corrected, _ = looks[0]
    return bool(np.all((corrected <= alpha) | (pvalues > FUTILE_PVALUE)))


def probe_decision(
    history, n_real, *, alpha, correction, keep_tentative, n_rounds=None
):
    """The probe test on the rounds' importances (``history``: ``real``,
    ``probes``, ``owners`` and ``classes``), as a :class:`ProbeDecision`.

    The test looks at the evidence after each round of :func:`look_rounds`
    (``n_rounds``, the rounds planned; None: one look, at the rounds in
    ``history``) that the rounds reached, and spends ``LOOK_SPENDING`` of
    ``alpha`` at each
    (Bonferroni over the looks: whatever happens between them, the chance
    of a wrong confirmation at any look is at most the sum). The corrected
    p-value is the smallest over the looks of the look's corrected p-value
    divided by its share, so that a feature is confirmed when it is at most
    ``alpha``; the p-value, the score and the threshold are those of the
    last look."""
    looks = _looks(history, n_real, correction, n_rounds)
    scores, pvalues, null, _, share = looks[-1]
    corrected = np.minimum(np.min([look[3] for look in looks], axis=0), 1.0)
    critical = critical_pvalue(
        adjust_pvalues(pvalues, correction), alpha * share, correction
    )
    threshold = mean_critical_value(null, critical) if len(null) else 0.0
    return decision_of(scores, pvalues, corrected, threshold, alpha, keep_tentative)


def decision_of(scores, pvalues, corrected, threshold, alpha, keep_tentative):
    """The :class:`ProbeDecision` of a test's scores and p-values."""
    decisions, ranking = decide(pvalues, corrected, scores, alpha)
    passed = decisions == "confirmed"
    if keep_tentative:
        passed |= decisions == "tentative"
    order = np.lexsort((-scores, pvalues))
    return ProbeDecision(
        passed, order, threshold, scores, pvalues, corrected, ranking, decisions
    )


class TooFewPassed(UserWarning):
    """:func:`apply_counts`' warning: fewer than ``min_features`` passed.
    A ``UserWarning``; its own class so that a decision taken again
    (``keep_tentative="auto"``'s score guard) can take back the first
    one's."""


def say_once(records, skip):
    """Warn again of the warnings ``records`` caught (as
    ``warnings.catch_warnings(record=True)`` keeps them), each message once
    and in order, but those ``skip(index, record)`` is true of."""
    said = set()
    for index, record in enumerate(records):
        key = (record.category, str(record.message))
        if key in said or skip(index, record):
            continue
        said.add(key)
        warnings.warn_explicit(
            record.message, record.category, record.filename, record.lineno
        )


def apply_counts(
    passed, order, *, max_features, min_features, detail, advice="", cause=None
):
    """``passed`` with at most ``max_features`` (None: no limit) of the
    groups that passed, in ``order``, and at least ``min_features``, the
    most significant first; a warning (``detail`` says what was reached,
    ``cause`` what most likely kept features out, a callable called only
    then, and ``advice`` ends it) when fewer than ``min_features``, or
    none, passed."""
    chosen = passed.copy()
    if max_features is not None:
        ranked_passed = [g for g in order if chosen[g]]
        chosen[ranked_passed[max_features:]] = False
    n_chosen = int(chosen.sum())
    if n_chosen < min_features or n_chosen == 0:
        kept = (
            f"keeping the {min_features} most important because "
            f"min_features={min_features}"
            if n_chosen < min_features
            else "min_features=0, so no feature is kept and refit is skipped"
        )
        why = UNKNOWN_CAUSE if cause is None else cause()
        warnings.warn(
            f"only {n_chosen} of {len(passed)} features (or groups) {detail}; "
            f"{kept}. {why}{advice}",
            TooFewPassed,
            stacklevel=6,
        )
        for g in order:
            if chosen.sum() >= min_features:
                break
            chosen[g] = True
    return chosen


#: The warning's cause where the fit measured nothing that says more.
UNKNOWN_CAUSE = (
    "The model may predict y no better than chance, or the data are too few: "
    "check importances_ and the model's held-out score."
)
#: A held-out score at most this far above a constant prediction's is "no
#: better than chance" in that warning.
CHANCE_MARGIN = 0.01


def likely_cause(outcome, result, *, n_rows, chance, loses):
    """What most likely kept features out, for the warning when too few
    pass (:func:`apply_counts`), from what the fit measured: the test's
    own cause (``outcome.cause``); else the model's held-out score on the
    rounds' rows (``result.baseline_score``) against ``chance()``, a
    constant prediction's score by the same scorer (None: unknown); and
    the table's shape. ``loses``: whether the measure is what the model
    loses without a column (permuted on held-out rows, or dropped), which
    redundant columns defeat: the others stand in for it."""
    if outcome.cause is not None:
        return outcome.cause
    n_real = len(outcome.passed)
    score = result.get("baseline_score")
    base = None
    if isinstance(score, float) and np.isfinite(score):
        base = chance()
    if base is not None and score <= base + CHANCE_MARGIN:
        return (
            f"On the rounds' held-out rows the model scored {score:.3g}, and a "
            f"constant prediction {base:.3g}: the model predicts y no better "
            "than chance there, or the data are too few."
        )
    said = (
        ""
        if base is None
        else f"On the rounds' held-out rows the model scored {score:.3g}, "
        f"against a constant prediction's {base:.3g}: it does predict y. "
    )
    causes = []
    if base is not None and loses:
        causes.append(
            "Where columns are redundant, each stands in for the others: "
            "permuting or dropping one costs the model little, and no single "
            "one beats its probes. method='shap' credits each column the "
            "model uses: on 500 redundant genes LightGBM kept 88 with it, 1 "
            "without (docs/user_guide.rst, 'Boosted models, imbalanced "
            "targets, wide data')."
        )
    if n_real > n_rows:
        causes.append(
            f"X has more features (or groups), {n_real}, than rows, {n_rows}: "
            "the correction over that many asks each feature for a p-value few "
            "rounds of probes give. threshold='stability' bounds the expected "
            "number of noise features kept instead (docs/user_guide.rst, "
            "'Boosted models, imbalanced targets, wide data')."
        )
    if base is not None and not causes:
        causes.append(
            "Its signal may be spread thinly over many columns, or the rows "
            "too few for the rounds to tell a feature from its probes."
        )
    if causes:
        return said + " ".join(causes)
    return UNKNOWN_CAUSE


def fit_cause(plan, n_rows, y):
    """:func:`likely_cause` for a fit of ``plan`` on ``n_rows`` rows of y."""
    from ..._methods import HELD_OUT_ROWS, REFITS
    from ..._utils._scoring import chance_score

    options = plan.options
    return partial(
        likely_cause,
        n_rows=n_rows,
        chance=partial(
            chance_score,
            plan.estimator,
            options.get("scoring"),
            y,
            options.get("sample_weight"),
        ),
        loses=plan.method is not None and plan.method.rows in (HELD_OUT_ROWS, REFITS),
    )


def max_features_count(max_features, X, n_groups):
    """The most features (or groups) to keep: ``max_features`` as a count
    (None: all ``n_groups``; a callable is called with X, as
    SelectFromModel does; a float is that fraction, at least 1)."""
    if max_features is None:
        return n_groups
    if callable(max_features):
        count = max_features(X)
        if isinstance(count, bool) or not isinstance(count, numbers.Integral):
            raise TypeError(
                f"max_features is a callable, and it returned {count!r} of type "
                f"{type(count).__name__}; it must return an int, the number of "
                "features to keep."
            )
        if count < 0:
            raise ValueError(
                f"max_features is a callable, and it returned {count}; it must "
                "return an int >= 0, the number of features to keep."
            )
        return int(count)
    if isinstance(max_features, numbers.Integral):
        return int(max_features)
    return max(1, int(max_features * n_groups))


def warn_if_probes_unseen(history, estimator, stacklevel=7):
    """Warn when every probe scored exactly 0 in every round: the test then
    compares the features with 0. Say what the model did: it used no
    column at all (a booster on few rows may make no split), or few
    columns and no probe; only a Pipeline has steps that could have
    dropped the probes (a ColumnTransformer listing columns by name)."""
    if np.any(history.probes):
        return
    from sklearn.pipeline import Pipeline

    name = f"estimator={type(estimator).__name__}(...)"
    used = int(np.sum(np.any(history.real != 0, axis=0)))
    if not used:
        did = (
            f"{name} gave every feature and every probe column an importance "
            "of 0 in every round: the model it fitted uses no column (it made "
            "no split, as a booster does on rows too few for its minimum "
            "leaf size), so no feature can beat the probes. Check the "
            "model's score; give it more rows, or smaller leaves "
            "(min_samples_leaf, min_child_samples)."
        )
    else:
        did = (
            f"{name} gave every probe column an importance of 0 in every "
            f"round, and {used} of {history.real.shape[1]} features (or "
            "groups) more: the model uses few columns (few splits, or few "
            "leaves), so 'beats the probes' reduces to 'importance above 0'."
        )
    if isinstance(estimator, Pipeline):
        did += (
            " If a step drops columns it does not know (a ColumnTransformer "
            "listing columns by name), let it pass them "
            "(remainder='passthrough' or make_column_selector)."
        )
    warnings.warn(did, UserWarning, stacklevel=stacklevel)


def per_feature(values, groups, n_features):
    """Group values spread to features (the smallest over overlaps)."""
    if values is None:
        return None
    out = np.full(n_features, np.inf)
    for value, columns in zip(values, groups):
        out[columns] = np.minimum(out[columns], value)
    return out


def tentative_advice(decisions, passed, *, where="decisions_", cv=True):
    """The end of the too-few-features warning when tentative features were
    left out: they beat the probes before the correction, which is what
    wide data with few rows often gives (docs/user_guide.rst). Without a
    correction no feature is tentative. ``where`` names the decisions the
    caller returns, and ``cv`` whether it offers ``keep_tentative="cv"``."""
    left_out = int(np.sum((decisions == "tentative") & ~passed))
    if not left_out:
        return ""
    keep = (
        "keep_tentative='cv' keeps those a cross-validated score of the model "
        "asks for, keep_tentative=True all of them; neither is"
        if cv
        else "keep_tentative=True keeps them, which is not"
    )
    return (
        f" {left_out} of them beat the probes before the correction for "
        f"testing {len(decisions)} at once ('tentative' in {where}): {keep} "
        "covered by the error promise of alpha."
    )


class Outcome(NamedTuple):
    """What a test decided, per feature (or group): the one shape every
    test strategy returns to :func:`select`."""

    #: kept by the test (before max_features and min_features)
    passed: np.ndarray
    #: the features, the strongest evidence first
    order: np.ndarray
    #: the value the test's threshold reached (``threshold_``)
    threshold: float
    ranking: np.ndarray
    #: what passing means, for the warning when too few pass
    detail: str
    #: the end of that warning
    advice: str = ""
    pvalues: np.ndarray = None
    corrected: np.ndarray = None
    #: each feature's test statistic (``importances_.statistics``)
    statistics: np.ndarray = None
    #: the share of stability selection's halves that selected it
    frequency: np.ndarray = None
    #: what the test measured kept features out, for that warning (None:
    #: :func:`likely_cause` says)
    cause: str = None


class FixedThreshold:
    """The test of a numeric threshold, or of a statistic of the features'
    mean importances ("mean", "median", "1.5*mean"): no probes, one
    measure."""

    def __init__(self, threshold):
        self.threshold = threshold

    def decide(self, result, history, n_real):
        means = result.importances_mean[:n_real]
        passed, order, value, ranking = threshold_decision(means, self.threshold)
        # what kept features out is the threshold, not the model
        cause = (
            f"The threshold ({value:.4g}) is above the mean importance of "
            f"{int(np.sum(~passed))} of them (the largest is "
            f"{np.max(means, initial=-np.inf):.4g}, importances_): a lower "
            "threshold, or 'mean' or 'median', which scale with the importances, "
            "keeps more."
        )
        return Outcome(
            passed,
            order,
            value,
            ranking,
            detail=f"reach threshold={self.threshold!r}",
            cause=cause,
        )


class ProbeTest:
    """The probe test on the rounds' ``history`` (``probe_decision``);
    ``choose_tentative``, when given, is called with the decisions and the
    order of significance and returns the groups that pass
    (``_tentative.choose_tentative``), in place of ``keep_tentative``."""

    def __init__(
        self,
        *,
        alpha,
        correction,
        keep_tentative,
        n_rounds,
        estimator,
        choose_tentative=None,
    ):
        self.alpha = alpha
        self.correction = correction
        self.keep_tentative = keep_tentative
        self.n_rounds = n_rounds
        self.estimator = estimator
        self.choose_tentative = choose_tentative

    def decide(self, result, history, n_real):
        warn_if_probes_unseen(history, self.estimator, stacklevel=8)
        test = probe_decision(
            history,
            n_real,
            alpha=self.alpha,
            correction=self.correction,
            keep_tentative=self.keep_tentative,
            n_rounds=self.n_rounds,
        )
        detail = (
            f"beat the probes at alpha={self.alpha} (correction={self.correction!r})"
        )
        return probe_outcome(test, self.choose_tentative, detail)


def probe_outcome(test, choose_tentative, detail):
    """The :class:`Outcome` of a :class:`ProbeDecision` ``test``: what it
    passed, or what ``choose_tentative(test)`` (not None)
    chose, and ``detail`` for the warning when too few pass."""
    passed = test.passed
    if choose_tentative is not None:
        passed = choose_tentative(test)
    return Outcome(
        passed,
        test.order,
        test.threshold,
        test.ranking,
        detail=detail,
        advice=tentative_advice(test.decisions, passed),
        pvalues=test.pvalues,
        corrected=test.corrected,
        statistics=test.scores,
    )


def select(
    result,
    history,
    groups,
    n_features,
    *,
    test,
    max_features,
    min_features,
    cause=None,
):
    """The selection from a measured ``result`` (and, with the probe test or
    stability selection, the rounds' ``history``; None without) by
    ``test``, a test strategy (:class:`FixedThreshold`, :class:`ProbeTest`,
    ``_stability.StabilitySelection``: ``test.decide(result, history,
    n_real)`` returns an :class:`Outcome`), then ``max_features`` and
    ``min_features``: a dict of ``support``, ``threshold``, ``pvalues``,
    ``pvalues_corrected``, ``ranking``, ``decisions`` and
    ``selection_frequency``, per feature (a group's values spread to its
    features). Adds ``statistics`` and ``pvalues`` (None without probes)
    to ``result``. ``cause(outcome, result)`` (None: the test's own, else
    ``UNKNOWN_CAUSE``) names what most likely kept features out, for the
    warning when too few pass.
    """
    n_real = len(groups)
    check_finite_importances(result, history, n_real)
    outcome = test.decide(result, history, n_real)
    if outcome.pvalues is None:
        result.statistics = result.pvalues = None
    else:
        missing = np.full(len(result.groups) - n_real, np.nan)
        result.statistics = np.concatenate([outcome.statistics, missing])
        result.pvalues = np.concatenate([outcome.pvalues, missing])
    chosen = apply_counts(
        outcome.passed,
        outcome.order,
        max_features=max_features,
        min_features=min_features,
        detail=outcome.detail,
        advice=outcome.advice,
        cause=lambda: (
            (outcome.cause if cause is None else cause(outcome, result))
            or UNKNOWN_CAUSE
        ),
    )
    support = np.zeros(n_features, dtype=bool)
    for g in np.flatnonzero(chosen):
        support[groups[g]] = True
    ranking = per_feature(outcome.ranking, groups, n_features).astype(int)
    return {
        "support": support,
        "threshold": outcome.threshold,
        "pvalues": per_feature(outcome.pvalues, groups, n_features),
        "pvalues_corrected": per_feature(outcome.corrected, groups, n_features),
        "ranking": ranking,
        "decisions": None
        if outcome.pvalues is None
        else DECISIONS[np.minimum(ranking, 3) - 1],
        "selection_frequency": per_feature(outcome.frequency, groups, n_features),
    }
